// multi_test.js - pods of several GPU containers, through the API server
// double: the kubelet stand-in admits a pod as the kubelet's device
// manager does (one Allocate per container, init containers first, a plain
// init container's devices reused by the containers after it, a sidecar's
// and an app container's never), and every container must get exactly its
// part of the GPUs the scheduler chose (docs/node.md, "Pods of several
// containers"), the pod marked allocated only after its last container;
// an app container asking a device another one holds is refused, so is a
// device asked for two containers of one request, and a GPU list too
// short for the containers. /metrics counts the pods holding each GPU,
// and drops a pod that ends or is deleted.
'use strict';
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check, expectError, uuid, request, place, phase} = lib;

const NODE = 'n1';
const api = loadApi(lib.protoPath());

function ctr(name, gpus, extra = {}) {
  return Object.assign({name, image: 'nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04',
    resources: {limits: {'nvidia.com/gpu': String(gpus)}}}, extra);
}

function pod(name, inits, containers) {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'default'},
    spec: {schedulerName: 'gpuplane', initContainers: inits, containers}};
}

// The kubelet's device manager for one pod: init containers, then app
// containers; reusable devices first (pick chooses which of them, as the
// kubelet's set order does), then GetPreferredAllocation for the rest.
async function admit(plugin, spec, free, pick) {
  const got = {}, asked = {};
  let reusable = [];
  for (const c of [...(spec.initContainers || []), ...spec.containers]) {
    const n = Number(c.resources.limits['nvidia.com/gpu']);
    const init = (spec.initContainers || []).includes(c);
    let ids = pick(c.name, reusable).slice(0, n);
    if (ids.length < n) {
      const avail = [...free, ...ids];
      const pref = await plugin.preferred([{available_deviceIDs: avail, must_include_deviceIDs: ids, allocation_size: n}]);
      ids = pref.container_responses[0].deviceIDs;
    }
    for (const id of ids) free.delete(id);
    asked[c.name] = ids;
    const a = await plugin.allocate([ids]);
    got[c.name] = a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES.split(',').sort();
    if (init && c.restartPolicy !== 'Always') reusable = [...new Set([...reusable, ...ids])];
    else reusable = reusable.filter((x) => !ids.includes(x));
  }
  return {got, asked};
}

const sorted = (gs) => gs.map((g) => uuid(g)).sort();

(async () => {
  const dir = lib.tmpdir('multi');
  const dbl = await lib.startDouble();
  const port = dbl.port;
  let agent, kubelet;
  try {
    const invFile = require('path').join(dir, 'inventory.json');
    lib.writeJson(invFile, lib.inventory(4));
    await request(port, 'POST', '/api/v1/nodes', {apiVersion: 'v1', kind: 'Node', metadata: {name: NODE}});
    kubelet = new Kubelet(api, dir);
    await kubelet.start();
    agent = lib.startAgent(['--kubeconfig', lib.kubeconfig(dir, port), '--node', NODE, '--inventory', invFile,
      '--plugin-dir', dir, '--alloc-wait-s', '1', '--metrics-addr', '127.0.0.1:0']);
    const regs = await kubelet.waitRegistrations((r) => r.length >= 1);
    const plugin = kubelet.plugin(regs[0].endpoint);
    const free = new Set([0, 1, 2, 3].map(uuid));

    // an init container of 2, two app containers of 1, on "3,1": the init
    // container gets 3 and 1, the first app container 3, the second 1
    // (the kubelet hands them the init container's devices the other way round)
    const spec1 = pod('multi', [ctr('fetch', 2)], [ctr('train', 1), ctr('eval', 1)]);
    await request(port, 'POST', '/api/v1/namespaces/default/pods', spec1);
    await place(port, 'multi', NODE, '3,1');
    const phases = [];
    const r1 = await admit(plugin, spec1.spec, free, (name, reusable) => {
      return name === 'train' ? reusable.filter((x) => x === uuid(1)) : reusable;
    });
    check(JSON.stringify(r1.got.fetch) === JSON.stringify(sorted([3, 1])),
      'init container: both GPUs of the pod', r1);
    check(JSON.stringify(r1.got.train) === JSON.stringify(sorted([3])) &&
      JSON.stringify(r1.got.eval) === JSON.stringify(sorted([1])),
    'app containers: their parts of the list, whatever reused IDs the kubelet picked', r1);
    phases.push(await phase(port, 'multi'));
    check(phases[0] === 'allocated', 'the pod is marked allocated after its last container', phases);

    // allocated only after the last: a pod of two app containers, the
    // phase looked at between them; the second asks the first one's device
    const spec2 = pod('dup', [], [ctr('a', 1), ctr('b', 1)]);
    await request(port, 'POST', '/api/v1/namespaces/default/pods', spec2);
    await place(port, 'dup', NODE, '0,2');
    const a = await plugin.allocate([[uuid(0)]]);
    check(a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === uuid(0), 'first container served', a.container_responses[0].envs);
    check(await phase(port, 'dup') === 'allocating', 'still allocating while a container waits', await phase(port, 'dup'));
    await expectError(plugin.allocate([[uuid(0)]]), /device ID "GPU-[0-9a-f-]+" asked for container b of pod default\/dup, which another of its containers holds/,
      'an app container asking a device another holds: refused');
    check(await phase(port, 'dup') === 'allocating', 'a refused pod is not marked allocated', await phase(port, 'dup'));
    await request(port, 'DELETE', '/api/v1/namespaces/default/pods/dup', {gracePeriodSeconds: 0});

    // a sidecar (restartPolicy Always) keeps its GPU, the plain init
    // container after it gets the next one, the app container both after
    // the sidecar's: "2,0,1" gives proxy 2, warm 0, main 0 and 1
    const spec3 = pod('side', [ctr('proxy', 1, {restartPolicy: 'Always'}), ctr('warm', 1)], [ctr('main', 2)]);
    await request(port, 'POST', '/api/v1/namespaces/default/pods', spec3);
    await place(port, 'side', NODE, '2,0,1');
    const all = new Set([0, 1, 2, 3].map(uuid));
    const r3 = await admit(plugin, spec3.spec, all, (name, reusable) => reusable);
    check(JSON.stringify(r3.got) === JSON.stringify({proxy: sorted([2]), warm: sorted([0]), main: sorted([0, 1])}),
      'sidecar, init and app container: each its part', r3);
    check(await phase(port, 'side') === 'allocated', 'the sidecar pod is allocated', await phase(port, 'side'));

    // a list too short for the containers (a sidecar's GPUs are kept)
    const spec4 = pod('short', [ctr('proxy', 1, {restartPolicy: 'Always'})], [ctr('main', 1)]);
    await request(port, 'POST', '/api/v1/namespaces/default/pods', spec4);
    await place(port, 'short', NODE, '3');
    await expectError(plugin.allocate([[uuid(3)]]), /pod default\/short: its containers need 2 GPU\(s\) of nvidia.com\/gpu/,
      'a GPU list shorter than the containers need: refused');
    await request(port, 'DELETE', '/api/v1/namespaces/default/pods/short', {gracePeriodSeconds: 0});

    // the pods holding each GPU: multi 3,1 and side 2,0,1
    const mport = Number(/metrics and \/healthz on port (\d+)/.exec(agent.log)[1]);
    const counts = async (want) => {
      let last = '';
      await lib.waitUntil(async () => { // the agent updates them every 0.2 s
        const m = await new Promise((res) => require('http').get({host: '127.0.0.1', port: mport, path: '/metrics'},
          (r) => { let b = ''; r.on('data', (x) => { b += x; }); r.on('end', () => res(b)); }));
        last = [0, 1, 2, 3].map((g) => {
          const re = new RegExp(`^gpuplane_node_gpu_pods_allocated\\{gpu="${uuid(g)}"\\} (\\d+)$`, 'm');
          const x = re.exec(m);
          return x ? Number(x[1]) : -1;
        });
        return JSON.stringify(last) === JSON.stringify(want);
      }, 'pods allocated per GPU ' + JSON.stringify(want), lib.WAIT_MS, 100).catch(() => {});
      return last;
    };
    let c = await counts([1, 2, 1, 1]);
    check(JSON.stringify(c) === '[1,2,1,1]', '/metrics: pods allocated per GPU', c);
    await request(port, 'PATCH', '/api/v1/namespaces/default/pods/multi/status', {status: {phase: 'Succeeded'}},
      'application/merge-patch+json');
    c = await counts([1, 1, 1, 0]);
    check(JSON.stringify(c) === '[1,1,1,0]', '/metrics: a pod that ended holds nothing', c);
    await request(port, 'DELETE', '/api/v1/namespaces/default/pods/side', {gracePeriodSeconds: 0});
    c = await counts([0, 0, 0, 0]);
    check(JSON.stringify(c) === '[0,0,0,0]', '/metrics: a deleted pod holds nothing', c);

    // no pod allocating: one request naming a device for two containers
    await expectError(plugin.allocate([[uuid(1)], [uuid(1)]]), /device ID "GPU-[0-9a-f-]+" asked for two containers/,
      'a device ID in two containers of one request: refused');
    plugin.close();
    const ag = agent;
    agent = null;
    const r = await lib.stopAgent(ag);
    check(r.code === 0 && /: 7 allocations, 3 refused/.test(ag.log), 'the agent counts 7 allocations and 3 refusals',
      ag.log.split('\n').slice(-3));
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  } finally {
    if (agent) await lib.stopAgent(agent);
    if (kubelet) await kubelet.stop();
    dbl.proc.kill('SIGTERM');
  }
  lib.finish();
})();
