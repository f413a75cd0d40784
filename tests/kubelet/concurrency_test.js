// concurrency_test.js - many fractional pods created at once on one node,
// through the API server double (tests/apidouble): a scheduler stand-in
// places them by the per-node protocol (gpuplane.io/node, gpuplane.io/gpus,
// gpuplane.io/phase=allocating before the Binding, one pod allocating per
// node), the kubelet stand-in admits each bound pod (GetPreferredAllocation,
// then Allocate; a third of the time it ignores the preference, as a
// kubelet may), and every container must get exactly the GPU the
// scheduler chose, every pod end "allocated", nothing refused. Then the
// protocol broken on purpose (two pods allocating at once): the agent
// must refuse, not guess. Then which pod an Allocate serves: none awaiting
// admission, ours beside a foreign one, ours expired: refused; a foreign
// pod alone: the kubelet's devices; ours once the foreign one is
// admitted: the GPU the scheduler chose.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check, expectError, uuid, startDouble, request} = lib;

const N_GPUS = 4, REPLICAS = 8, N_PODS = 24, NODE = 'n1';
const api = loadApi(lib.protoPath());

function pod(name) {
  return {apiVersion: 'v1', kind: 'Pod',
    metadata: {name, namespace: 'default', annotations: {'gpuplane.io/gpu-milli': '125'}},
    spec: {schedulerName: 'gpuplane', containers: [{name: 'main', image: 'nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04',
      resources: {limits: {'nvidia.com/gpu': '1'}}}]}};
}

// A small seeded generator: the same run every time.
let seed = 12345;
function rand(n) { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 8) % n; }

(async () => {
  const dir = lib.tmpdir('conc');
  const dbl = await startDouble();
  const port = dbl.port;
  let agent, kubelet;
  try {
    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters:
- name: double
  cluster: {server: "http://127.0.0.1:${port}"}
users:
- name: u
  user: {token: "t"}
contexts:
- name: c
  context: {cluster: double, user: u, namespace: default}
current-context: c
`);
    const invFile = path.join(dir, 'inventory.json');
    lib.writeJson(invFile, lib.inventory(N_GPUS));
    const nodeObj = await request(port, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node',
      metadata: {name: NODE, labels: {'kubernetes.io/hostname': NODE}}});
    check(nodeObj.status === 201, 'the Node created', nodeObj.status);
    kubelet = new Kubelet(api, dir);
    await kubelet.start();
    agent = lib.startAgent(['--kubeconfig', kubeconfig, '--node', NODE, '--inventory', invFile,
      '--plugin-dir', dir, '--time-slicing', String(REPLICAS), '--alloc-wait-s', '1',
      '--metrics-addr', '127.0.0.1:0']);
    const regs = await kubelet.waitRegistrations((r) => r.length >= 1);
    const node = await request(port, 'GET', `/api/v1/nodes/${NODE}`);
    const labels = node.body.metadata.labels;
    check(labels['nvidia.com/gpu.count'] === String(N_GPUS) && labels['nvidia.com/gpu.replicas'] === String(REPLICAS) &&
      labels['kubernetes.io/hostname'] === NODE, 'the agent patched GFD labels onto the Node, others kept', labels);
    const plugin = kubelet.plugin(regs[0].endpoint);

    // the kubelet's view: which replica IDs are free
    const free = new Set();
    for (let g = 0; g < N_GPUS; g++) for (let k = 0; k < REPLICAS; k++) free.add(`${uuid(g)}::${k}`);
    const answers = {};   // pod -> NVIDIA_VISIBLE_DEVICES
    const admissions = [];
    let ignored = 0, n = 0;
    const admit = (name) => admissions.push((async () => {
      await lib.sleep(rand(15));
      const avail = [...free];
      const pref = await plugin.preferred([{available_deviceIDs: avail, must_include_deviceIDs: [], allocation_size: 1}]);
      let id = pref.container_responses[0].deviceIDs[0];
      if (n++ % 3 === 2) { // a kubelet that ignores the preference
        const other = avail.find((x) => x.split('::')[0] !== id.split('::')[0]);
        if (other) { id = other; ignored++; }
      }
      free.delete(id);
      const a = await plugin.allocate([[id]]);
      answers[name] = a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES;
    })().catch((e) => { answers[name] = 'error: ' + (e.details || e.message); }));

    // every pod created at once
    const names = [];
    for (let i = 0; i < N_PODS; i++) names.push(`frac-${String(i).padStart(2, '0')}`);
    const created = await Promise.all(names.map((nm) => request(port, 'POST', '/api/v1/namespaces/default/pods', pod(nm))));
    check(created.every((r) => r.status === 201), `${N_PODS} pods created at once`, created.map((r) => r.status));

    // the scheduler stand-in: four workers, one pod allocating per node (a lock)
    const chosen = {};
    const used = new Array(N_GPUS).fill(0);
    let nodeLock = Promise.resolve();
    let maxAllocating = 0, allocatingNow = 0;
    const queue = [...names];
    const schedule = async (name) => {
      let release;
      const held = new Promise((r) => { release = r; });
      const prev = nodeLock;
      nodeLock = prev.then(() => held);
      await prev;
      try {
        let g;
        do { g = rand(N_GPUS); } while (used[g] >= REPLICAS);
        used[g]++;
        chosen[name] = g;
        const cur = await request(port, 'GET', `/api/v1/namespaces/default/pods/${name}`);
        const patch = await request(port, 'PATCH', `/api/v1/namespaces/default/pods/${name}`, {metadata: {
          resourceVersion: cur.body.metadata.resourceVersion,
          annotations: {'gpuplane.io/node': NODE, 'gpuplane.io/gpus': String(g), 'gpuplane.io/phase': 'allocating'}}},
        'application/merge-patch+json');
        if (patch.status !== 200) throw new Error('patch ' + patch.status);
        allocatingNow++;
        maxAllocating = Math.max(maxAllocating, allocatingNow);
        const bind = await request(port, 'POST', `/api/v1/namespaces/default/pods/${name}/binding`, {
          apiVersion: 'v1', kind: 'Binding', metadata: {name, namespace: 'default', uid: cur.body.metadata.uid},
          target: {apiVersion: 'v1', kind: 'Node', name: NODE}});
        if (bind.status !== 201) throw new Error('bind ' + bind.status);
        admit(name); // the kubelet sees the pod bound
        const until = Date.now() + lib.WAIT_MS;
        for (;;) {
          const p = await request(port, 'GET', `/api/v1/namespaces/default/pods/${name}`);
          if (p.body.metadata.annotations['gpuplane.io/phase'] === 'allocated') break;
          if (Date.now() > until) throw new Error(name + ' never allocated');
          await lib.sleep(5);
        }
        allocatingNow--;
      } finally {
        release();
      }
    };
    const worker = async () => { while (queue.length) await schedule(queue.shift()); };
    const t0 = Date.now();
    await Promise.all([worker(), worker(), worker(), worker()]);
    await Promise.all(admissions);
    const ms = Date.now() - t0;
    check(maxAllocating === 1, 'the scheduler stand-in kept one pod allocating at a time', maxAllocating);
    const wrong = names.filter((nm) => answers[nm] !== uuid(chosen[nm]));
    check(wrong.length === 0, `every container got exactly the GPU the scheduler chose (${N_PODS} pods, ${ms} ms, ` +
      `the kubelet ignored the preference ${ignored} times)`, wrong.map((nm) => ({pod: nm, chose: uuid(chosen[nm]), got: answers[nm]})));
    const list = await request(port, 'GET', '/api/v1/namespaces/default/pods');
    const phases = list.body.items.map((p) => p.metadata.annotations['gpuplane.io/phase']);
    check(phases.length === N_PODS && phases.every((p) => p === 'allocated'), 'every pod is marked allocated', phases);

    // the protocol broken: two pods allocating on the node at once
    for (const nm of ['bad-a', 'bad-b']) {
      await request(port, 'POST', '/api/v1/namespaces/default/pods', pod(nm));
      await request(port, 'PATCH', `/api/v1/namespaces/default/pods/${nm}`, {metadata: {annotations: {
        'gpuplane.io/node': NODE, 'gpuplane.io/gpus': '0', 'gpuplane.io/phase': 'allocating'}}}, 'application/merge-patch+json');
      await request(port, 'POST', `/api/v1/namespaces/default/pods/${nm}/binding`, {apiVersion: 'v1', kind: 'Binding',
        metadata: {name: nm, namespace: 'default'}, target: {apiVersion: 'v1', kind: 'Node', name: NODE}});
    }
    await expectError(plugin.allocate([[`${uuid(3)}::7`]]), /2 pods allocating on node n1/,
      'two pods allocating on one node: Allocate refused, not guessed');
    for (const nm of ['bad-a', 'bad-b'])
      await request(port, 'DELETE', `/api/v1/namespaces/default/pods/${nm}`, {gracePeriodSeconds: 0});

    // which pod an Allocate serves is told apart, never guessed (the
    // review's R3): the candidates are the pods bound here that ask the
    // resource and that the kubelet has not admitted (no container status)
    const bound = async (nm, ann, foreign) => {
      const body = pod(nm);
      if (foreign) body.spec.schedulerName = 'default-scheduler';
      delete body.metadata.annotations;
      const made = await request(port, 'POST', '/api/v1/namespaces/default/pods', body);
      if (ann) {
        await request(port, 'PATCH', `/api/v1/namespaces/default/pods/${nm}`, {metadata: {annotations: ann}},
          'application/merge-patch+json');
      }
      await request(port, 'POST', `/api/v1/namespaces/default/pods/${nm}/binding`, {apiVersion: 'v1', kind: 'Binding',
        metadata: {name: nm, namespace: 'default', uid: made.body.metadata.uid},
        target: {apiVersion: 'v1', kind: 'Node', name: NODE}});
    };
    const ours = (g, phase) => ({'gpuplane.io/node': NODE, 'gpuplane.io/gpus': String(g), 'gpuplane.io/phase': phase});
    // no pod awaits admission here: refused (it used to get the kubelet's device)
    await expectError(plugin.allocate([[`${uuid(2)}::6`]]),
      /no pod bound to node n1 awaits admission asking 1 nvidia\.com\/gpu: cannot tell which pod this Allocate serves/,
      'no pod awaiting admission: Allocate refused, not served blind');
    // a pod another scheduler placed, alone: the kubelet's device
    await bound('other-a', null, true);
    const a = await plugin.allocate([[`${uuid(2)}::6`]]);
    check(a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === uuid(2),
      'a pod another scheduler placed, the only one awaiting admission: the kubelet\'s device', a.container_responses[0].envs);
    // ours allocating and a foreign pod both awaiting: the foreign pod's
    // Allocate must not get ours' GPU, so neither is guessed
    await bound('mine', ours(1, 'allocating'), false);
    await bound('other-b', null, true);
    await expectError(plugin.allocate([[`${uuid(3)}::7`]]),
      /2 pods bound to node n1 await admission asking nvidia\.com\/gpu \(default\/mine allocating, default\/other-b \(not placed by gpuplane\)\): cannot tell which one/,
      'ours allocating beside a foreign pod awaiting admission: refused, not given to whichever asks');
    // the foreign pod admitted (the kubelet reports its container): the
    // Allocate is ours', with the GPU the scheduler chose
    await request(port, 'PATCH', '/api/v1/namespaces/default/pods/other-b/status', {status: {phase: 'Running'}},
      'application/merge-patch+json');
    const m = await plugin.allocate([[`${uuid(3)}::7`]]);
    check(m.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === uuid(1),
      'the foreign pod admitted: the allocating pod gets its chosen GPU, not the kubelet\'s', m.container_responses[0].envs);
    const mine = await request(port, 'GET', '/api/v1/namespaces/default/pods/mine');
    check(mine.body.metadata.annotations['gpuplane.io/phase'] === 'allocated', 'and it is marked allocated',
      mine.body.metadata.annotations);
    // a pod whose decision expired (the scheduler gave its GPU up): refused
    await bound('late', ours(0, 'expired'), false);
    await expectError(plugin.allocate([[`${uuid(0)}::5`]]),
      /pod default\/late \(gpuplane\.io\/phase: expired\) is no longer the scheduler's decision on node n1: its GPUs may be another pod's now; refusing/,
      'a pod whose decision expired: refused, not served the GPU the scheduler may have given away');
    for (const nm of ['other-a', 'mine', 'other-b', 'late'])
      await request(port, 'DELETE', `/api/v1/namespaces/default/pods/${nm}`, {gracePeriodSeconds: 0});
    const mport = /metrics and \/healthz on port (\d+)/.exec(agent.log);
    const scrape = () => new Promise((res) => http.get({host: '127.0.0.1', port: Number(mport[1]), path: '/metrics'},
      (r) => { let b = ''; r.on('data', (d) => { b += d; }); r.on('end', () => res(b)); }));
    let metrics = '';
    if (mport) { // the agent updates them every 0.2 s
      await lib.waitUntil(async () => {
        metrics = await scrape();
        return new RegExp(`^gpuplane_node_allocations_total ${N_PODS + 2}$`, 'm').test(metrics) &&
          /^gpuplane_node_allocate_refusals_total 4$/m.test(metrics);
      }, 'the allocations counted in /metrics', lib.WAIT_MS, 100).catch(() => {});
    }
    check(new RegExp(`^gpuplane_node_allocations_total ${N_PODS + 2}$`, 'm').test(metrics) &&
      /^gpuplane_node_allocate_refusals_total 4$/m.test(metrics) &&
      /^gpuplane_node_plugin_devices\{resource="nvidia.com\/gpu"\} 32$/m.test(metrics) &&
      /^gpuplane_node_gpu_healthy\{gpu="GPU-10000000-aaaa-bbbb-cccc-000000000000"\} 1$/m.test(metrics),
      '/metrics: allocations, refusals, devices, per-GPU health', metrics.split('\n').filter((l) => /^gpuplane_node_(alloc|plugin_dev|gpu_healthy)/.test(l)));
    plugin.close();
    const ag = agent;
    agent = null;
    const r = await lib.stopAgent(ag);
    check(r.code === 0 && new RegExp(`: ${N_PODS + 2} allocations, 4 refused`).test(ag.log),
      `the agent counts ${N_PODS + 2} allocations and 4 refusals`, ag.log.split('\n').slice(-3));
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  } finally {
    if (agent) await lib.stopAgent(agent);
    if (kubelet) await kubelet.stop();
    dbl.proc.kill('SIGTERM');
  }
  lib.finish();
})();
