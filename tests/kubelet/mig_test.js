// mig_test.js - MIG pods answered with exactly the instances the scheduler
// chose (gpuplane.io/mig, docs/kube.md "Annotations"; docs/node.md "Which
// pod an Allocate serves"), the agent on the fake NVML's MIG devices
// (tests/fakenvml) and the API server double: the preferred allocation is
// the chosen instances, Allocate answers their MIG UUIDs in
// NVIDIA_VISIBLE_DEVICES and as CDI devices, the kubelet naming another
// instance of the pod's GPU (the chosen one free) is refused, so are a
// device asked twice and an annotation that names one instance twice.
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check, expectError, request, phase} = lib;

const NODE = 'n1', RES = 'nvidia.com/mig-1g.10gb';
const api = loadApi(lib.protoPath());
const FAKE = process.env.GP_FAKENVML;

// Two A100s in MIG mode: 1g.10gb instances at slices 0, 1, 2 of GPU 0 and
// 0, 1 of GPU 1, each MIG-<gpu>-<slice>.
function fakeConfig(dir) {
  const mig = (g, s) => `mig uuid=MIG-${g}-${s} gi=${s + 1} ci=0 profile=19 start=${s} size=1 memory=9728 gislices=1 cislices=1\n`;
  const gpu = (g, bus) => `gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-m${g} pci=00000000:${bus}:00.0 pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=0 persistence=1 mig=1\n`;
  const conf = path.join(dir, 'nvml.conf');
  fs.writeFileSync(conf, 'driver 535.104.05\ncuda 12020\n' + gpu(0, '07') + mig(0, 0) + mig(0, 1) + mig(0, 2) +
    gpu(1, '0F') + mig(1, 0) + mig(1, 1));
  return conf;
}

function pod(name, n) {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'default'},
    spec: {schedulerName: 'gpuplane', containers: [{name: 'main', image: 'nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04',
      resources: {limits: {[RES]: String(n)}}}]}};
}

// What the scheduler writes for a MIG pod, then the Binding.
async function placeMig(port, name, gpus, mig) {
  const base = `/api/v1/namespaces/default/pods/${name}`;
  const cur = await request(port, 'GET', base);
  const patch = await request(port, 'PATCH', base, {metadata: {resourceVersion: cur.body.metadata.resourceVersion,
    annotations: {'gpuplane.io/node': NODE, 'gpuplane.io/gpus': gpus, 'gpuplane.io/mig': mig,
      'gpuplane.io/phase': 'allocating'}}}, 'application/merge-patch+json');
  if (patch.status !== 200) throw new Error('patch ' + patch.status);
  const bind = await request(port, 'POST', base + '/binding', {apiVersion: 'v1', kind: 'Binding',
    metadata: {name, namespace: 'default', uid: cur.body.metadata.uid}, target: {apiVersion: 'v1', kind: 'Node', name: NODE}});
  if (bind.status !== 201) throw new Error('bind ' + bind.status);
}

const del = (port, name) => request(port, 'DELETE', `/api/v1/namespaces/default/pods/${name}`, {gracePeriodSeconds: 0});

(async () => {
  if (!FAKE || !fs.existsSync(FAKE)) {
    console.log('skipped: the fake NVML (GP_FAKENVML) is not built');
    process.exit(77);
  }
  const dir = lib.tmpdir('mig');
  const dbl = await lib.startDouble();
  const port = dbl.port;
  let agent, kubelet;
  try {
    await request(port, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: NODE}});
    kubelet = new Kubelet(api, dir);
    await kubelet.start();
    agent = lib.startAgent(['--kubeconfig', lib.kubeconfig(dir, port), '--node', NODE, '--nvml', FAKE,
      '--mig-strategy', 'mixed', '--plugin-dir', dir, '--alloc-wait-s', '1'], {GPUPLANE_FAKE_NVML: fakeConfig(dir)});
    const regs = await kubelet.waitRegistrations((r) => r.some((x) => x.resource_name === RES));
    const plugin = kubelet.plugin(regs.find((x) => x.resource_name === RES).endpoint);
    const w = plugin.watch();
    const list = await w.waitFor((l) => l.length === 5);
    const all = list.map((d) => d.ID);
    check(all.join(' ') === 'MIG-0-0 MIG-0-1 MIG-0-2 MIG-1-0 MIG-1-1', `${RES}: the five MIG devices by UUID`, all);

    // the scheduler chose GPU 0 slice 1 and GPU 1 slice 0
    await request(port, 'POST', '/api/v1/namespaces/default/pods', pod('exact', 2));
    await placeMig(port, 'exact', '0,1', '1g.10gb:0@1,1@0');
    const pref = await plugin.preferred([{available_deviceIDs: all, must_include_deviceIDs: [], allocation_size: 2}]);
    check(pref.container_responses[0].deviceIDs.join(' ') === 'MIG-0-1 MIG-1-0',
      'GetPreferredAllocation: the instances the scheduler chose', pref.container_responses[0].deviceIDs);
    // the kubelet names another instance of GPU 0 while the chosen one is free
    await expectError(plugin.allocate([['MIG-0-0', 'MIG-1-0']]), /MIG device MIG-0-0 \(1g\.10gb at GPU 0 slice 0\) for default\/exact is not one of the instances the scheduler chose/,
      'Allocate: another instance of the pod\'s GPU is refused, not served');
    check(await phase(port, 'exact') === 'allocating', 'the refused pod is not marked allocated', await phase(port, 'exact'));
    const a = await plugin.allocate([['MIG-0-1', 'MIG-1-0']]);
    const c = a.container_responses[0];
    check(c.envs.NVIDIA_VISIBLE_DEVICES === 'MIG-0-1,MIG-1-0', 'Allocate: NVIDIA_VISIBLE_DEVICES the chosen MIG UUIDs', c.envs);
    check(c.cdi_devices.map((d) => d.name).join(' ') === 'nvidia.com/gpu=MIG-0-1 nvidia.com/gpu=MIG-1-0',
      'Allocate: CDI devices nvidia.com/gpu=<MIG UUID>', c.cdi_devices);
    check(await phase(port, 'exact') === 'allocated', 'the pod is marked allocated', await phase(port, 'exact'));

    // duplicates: the kubelet's, then the scheduler's annotation
    await request(port, 'POST', '/api/v1/namespaces/default/pods', pod('twice', 2));
    await placeMig(port, 'twice', '0', '1g.10gb:0@2,0@0');
    await expectError(plugin.allocate([['MIG-0-2', 'MIG-0-2']]), /asked twice/, 'Allocate: a MIG device asked twice is refused');
    await del(port, 'twice');
    await request(port, 'POST', '/api/v1/namespaces/default/pods', pod('dupann', 2));
    await placeMig(port, 'dupann', '0', '1g.10gb:0@2,0@2');
    await expectError(plugin.allocate([['MIG-0-2', 'MIG-0-0']]), /names instance 0@2 twice/,
      'Allocate: an annotation naming one instance twice is refused');
    await del(port, 'dupann');
    // an instance on a GPU the pod does not have
    await request(port, 'POST', '/api/v1/namespaces/default/pods', pod('off', 1));
    await placeMig(port, 'off', '1', '1g.10gb:1@1');
    await expectError(plugin.allocate([['MIG-0-2']]), /MIG device MIG-0-2 .* is not one of the instances/,
      'Allocate: a MIG device off the pod\'s GPUs is refused');
    const ok = await plugin.allocate([['MIG-1-1']]);
    check(ok.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === 'MIG-1-1', 'Allocate: GPU 1 slice 1 served', ok.container_responses[0].envs);
    w.cancel();
    plugin.close();
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  }
  if (agent) {
    const r = await lib.stopAgent(agent);
    check(r.code === 0, 'agent stops cleanly', {code: r.code, log: agent.log.split('\n').slice(-5)});
  }
  if (kubelet) await kubelet.stop();
  dbl.proc.kill();
  lib.finish();
})();
