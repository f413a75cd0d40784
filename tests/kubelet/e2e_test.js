// e2e_test.js - gpuplane's own scheduler and its node agent together,
// through the API server double (tests/apidouble): `gpuplane schedule`
// places many fractional pods created at once on one time-sliced node
// (4 GPUs x 8 replicas, read from the labels and capacity the agent's
// device plugin implies), the kubelet stand-in admits each pod the API
// shows bound, one at a time as the kubelet admits (GetPreferredAllocation, then Allocate; a third of the
// time it ignores the preference, as a kubelet may), and every container
// must get exactly the GPU the scheduler wrote in gpuplane.io/gpus, every
// pod end "allocated", no GPU hold more pods than its replicas, nothing be
// refused (issue 16 item 8: concurrency_test.js drives the agent with a
// scheduler stand-in; here the scheduler is gpuplane's).
'use strict';
const path = require('path');
const {spawn} = require('child_process');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check, uuid, startDouble, request} = lib;

const N_GPUS = 4, REPLICAS = 8, N_PODS = 24, NODE = 'n1';
const api = loadApi(lib.protoPath());

function pod(name) {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'default'},
    spec: {schedulerName: 'gpuplane', containers: [{name: 'main', image: 'nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04',
      resources: {requests: {cpu: '100m', memory: '1Gi', 'nvidia.com/gpu': '1'}, limits: {'nvidia.com/gpu': '1'}}}]}};
}

let seed = 4242;
function rand(n) { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 8) % n; }

(async () => {
  const dir = lib.tmpdir('e2e');
  const dbl = await startDouble();
  const port = dbl.port;
  let agent, kubelet, sched;
  try {
    const kubeconfig = lib.kubeconfig(dir, port);
    const invFile = path.join(dir, 'inventory.json');
    lib.writeJson(invFile, lib.inventory(N_GPUS));
    const made = await request(port, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node',
      metadata: {name: NODE, labels: {'kubernetes.io/hostname': NODE}}, spec: {}});
    check(made.status === 201, 'the Node created', made.status);
    // the kubelet's part of the Node: the capacity the plugin's
    // ListAndWatch gives (4 GPUs x 8 replicas) and Ready
    const res = {cpu: '64', memory: '512Gi', 'nvidia.com/gpu': String(N_GPUS * REPLICAS), pods: '110'};
    const st = await request(port, 'PATCH', `/api/v1/nodes/${NODE}/status`, {status: {capacity: res, allocatable: res,
      conditions: [{type: 'Ready', status: 'True'}]}}, 'application/merge-patch+json');
    check(st.status === 200, 'the Node\'s status patched', st.status);
    kubelet = new Kubelet(api, dir);
    await kubelet.start();
    agent = lib.startAgent(['--kubeconfig', kubeconfig, '--node', NODE, '--inventory', invFile,
      '--plugin-dir', dir, '--time-slicing', String(REPLICAS)]);
    const regs = await kubelet.waitRegistrations((r) => r.length >= 1);
    const plugin = kubelet.plugin(regs[0].endpoint);
    const labels = (await request(port, 'GET', `/api/v1/nodes/${NODE}`)).body.metadata.labels;
    check(labels['gpuplane.io/agent'] === '1' && labels['nvidia.com/gpu.replicas'] === String(REPLICAS),
      'the agent labelled the Node (gpuplane.io/agent, GFD\'s replicas) before registering', labels);
    const list = await new Promise((res) => {
      const w = plugin.watch();
      w.waitFor((l) => l.length === N_GPUS * REPLICAS).then((l) => { w.cancel(); res(l); }, () => { w.cancel(); res([]); });
    });
    check(list.length === N_GPUS * REPLICAS, `ListAndWatch: ${N_GPUS * REPLICAS} replicas`, list.length);

    // every pod created at once, then gpuplane's scheduler started
    const names = [];
    for (let i = 0; i < N_PODS; i++) names.push(`frac-${String(i).padStart(2, '0')}`);
    const created = await Promise.all(names.map((nm) => request(port, 'POST', '/api/v1/namespaces/default/pods', pod(nm))));
    check(created.every((r) => r.status === 201), `${N_PODS} pods created at once`, created.map((r) => r.status));
    const sp = spawn(process.env.GPUPLANE, ['schedule', '--kubeconfig', kubeconfig, '--leader-elect', 'false',
      '--max-s', '120'], {stdio: ['ignore', 'ignore', 'pipe']});
    sp.log = '';
    sp.stderr.on('data', (d) => { sp.log += d; if (process.env.GP_VERBOSE) process.stderr.write(d); });
    sp.done = new Promise((r) => sp.on('exit', (code, sig) => r({code, sig})));
    sched = sp;

    // the kubelet stand-in: the pods bound here, admitted one at a time
    const free = new Set();
    for (let g = 0; g < N_GPUS; g++) for (let k = 0; k < REPLICAS; k++) free.add(`${uuid(g)}::${k}`);
    const answers = {}, chosen = {};
    let ignored = 0, n = 0, maxAllocating = 0;
    const until = Date.now() + 2 * lib.WAIT_MS;
    while (Object.keys(answers).length < N_PODS && Date.now() < until) {
      const pods = (await request(port, 'GET', `/api/v1/namespaces/default/pods`)).body.items;
      const allocating = pods.filter((p) => (p.metadata.annotations || {})['gpuplane.io/phase'] === 'allocating');
      maxAllocating = Math.max(maxAllocating, allocating.length);
      const next = pods.filter((p) => p.spec.nodeName === NODE && !(p.metadata.name in answers));
      if (!next.length) { await lib.sleep(10); continue; }
      const p = next[0];
      const nm = p.metadata.name;
      chosen[nm] = (p.metadata.annotations || {})['gpuplane.io/gpus'];
      try {
        const avail = [...free];
        const pref = await plugin.preferred([{available_deviceIDs: avail, must_include_deviceIDs: [], allocation_size: 1}]);
        let id = pref.container_responses[0].deviceIDs[0];
        if (n++ % 3 === 2) { // a kubelet that ignores the preference
          const other = avail.find((x) => x.split('::')[0] !== id.split('::')[0]);
          if (other) { id = other; ignored++; }
        }
        free.delete(id);
        const a = await plugin.allocate([[id]]);
        answers[nm] = a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES;
      } catch (e) {
        answers[nm] = 'error: ' + (e.details || e.message);
      }
      // the kubelet starts the container: the pod Running
      await request(port, 'PATCH', `/api/v1/namespaces/default/pods/${nm}/status`, {status: {phase: 'Running'}},
        'application/merge-patch+json');
    }
    check(Object.keys(answers).length === N_PODS, `all ${N_PODS} pods bound by gpuplane's scheduler and admitted`,
      {admitted: Object.keys(answers).length, log: sp.log.split('\n').slice(-5)});
    check(maxAllocating <= 1, 'the scheduler kept at most one pod allocating on the node', maxAllocating);
    const wrong = names.filter((nm) => !(chosen[nm] !== undefined && /^[0-9]+$/.test(chosen[nm]) &&
      answers[nm] === uuid(Number(chosen[nm]))));
    check(wrong.length === 0, `every container got exactly the GPU gpuplane's scheduler chose (the kubelet ignored ` +
      `the preference ${ignored} times)`, wrong.map((nm) => ({pod: nm, chose: chosen[nm], got: answers[nm]})));
    const per = new Array(N_GPUS).fill(0);
    for (const nm of names) if (/^[0-9]+$/.test(chosen[nm] || '')) per[Number(chosen[nm])]++;
    check(per.every((c) => c <= REPLICAS) && per.reduce((x, y) => x + y, 0) === N_PODS,
      `no GPU given more than its ${REPLICAS} replicas`, per);
    const after = (await request(port, 'GET', '/api/v1/namespaces/default/pods')).body.items;
    const phases = after.map((p) => (p.metadata.annotations || {})['gpuplane.io/phase']);
    check(phases.length === N_PODS && phases.every((p) => p === 'allocated'), 'every pod is marked allocated', phases);
    plugin.close();
    sched = null;
    sp.kill('SIGTERM');
    const sr = await sp.done;
    check(sr.code === 0 && new RegExp(`^gpuplane schedule: ${N_PODS} bound, 0 unschedulable, 0 rolled back, ` +
      '0 audit violations$', 'm').test(sp.log), 'the scheduler stops cleanly, every pod bound, no audit violation',
    {code: sr.code, sig: sr.sig, log: sp.log.split('\n').slice(-3)});
    const ag = agent;
    agent = null;
    const r = await lib.stopAgent(ag);
    check(r.code === 0 && new RegExp(`: ${N_PODS} allocations, 0 refused`).test(ag.log),
      `the agent counts ${N_PODS} allocations and no refusal`, ag.log.split('\n').slice(-3));
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  } finally {
    if (sched) { sched.kill('SIGKILL'); await sched.done; }
    if (agent) await lib.stopAgent(agent);
    if (kubelet) await kubelet.stop();
    dbl.proc.kill('SIGTERM');
  }
  lib.finish();
})();
