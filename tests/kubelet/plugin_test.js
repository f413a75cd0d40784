// plugin_test.js - the device plugin (gpuplane node agent --no-api)
// against the kubelet stand-in: registration, device lists under each
// sharing mode, preferred allocations, Allocate's answers and refusals,
// a health change streamed, re-registration after a kubelet restart.
'use strict';
const path = require('path');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check, expectError, uuid} = lib;

const api = loadApi(lib.protoPath());

// Starts a kubelet and the agent on a fresh directory; returns both.
async function setup(tag, inv, flags = []) {
  const dir = lib.tmpdir(tag);
  const invFile = path.join(dir, 'inventory.json');
  lib.writeJson(invFile, inv);
  const kubelet = new Kubelet(api, dir);
  await kubelet.start();
  const agent = lib.startAgent(['--no-api', '--inventory', invFile, '--plugin-dir', dir,
    '--node', 'n1', ...flags]);
  return {dir, invFile, kubelet, agent};
}

async function teardown(t) {
  const r = await lib.stopAgent(t.agent);
  check(r.code === 0, 'agent stops cleanly on SIGTERM', {code: r.code, sig: r.sig, log: t.agent.log});
  await t.kubelet.stop();
}

async function wholeGpus() {
  const t = await setup('whole', lib.inventory(4));
  const regs = await t.kubelet.waitRegistrations((r) => r.length >= 1);
  const r = regs[0];
  check(r.version === 'v1beta1' && r.endpoint === 'nvidia-gpu.sock' &&
        r.resource_name === 'nvidia.com/gpu' && r.options.get_preferred_allocation_available,
        'Register: v1beta1, nvidia-gpu.sock, nvidia.com/gpu, preferred allocation offered', r);
  const p = t.kubelet.plugin(r.endpoint);
  const opts = await p.options();
  check(opts.get_preferred_allocation_available && !opts.pre_start_required,
        'GetDevicePluginOptions', opts);
  const w = p.watch();
  const list = await w.waitFor((l) => l.length === 4);
  check(list.every((d, i) => d.ID === uuid(i) && d.health === 'Healthy'),
        'ListAndWatch: the four GPUs by UUID, Healthy', list);
  const all = [0, 1, 2, 3].map(uuid);
  let pref = await p.preferred([{available_deviceIDs: all, must_include_deviceIDs: [], allocation_size: 2}]);
  check(JSON.stringify(pref.container_responses[0].deviceIDs) === JSON.stringify([uuid(0), uuid(1)]),
        'GetPreferredAllocation: an NVLinked pair', pref.container_responses[0]);
  pref = await p.preferred([{available_deviceIDs: all, must_include_deviceIDs: [uuid(2)], allocation_size: 2}]);
  check(JSON.stringify(pref.container_responses[0].deviceIDs) === JSON.stringify([uuid(2), uuid(3)]),
        'GetPreferredAllocation: must-include GPU 2 brings its NVLink peer 3', pref.container_responses[0]);
  pref = await p.preferred([{available_deviceIDs: [uuid(0), uuid(2), uuid(3)], must_include_deviceIDs: [], allocation_size: 2}]);
  check(JSON.stringify(pref.container_responses[0].deviceIDs) === JSON.stringify([uuid(2), uuid(3)]),
        'GetPreferredAllocation: the linked pair among what is available', pref.container_responses[0]);
  const a = await p.allocate([[uuid(1), uuid(0)]]);
  const c = a.container_responses[0];
  check(c.envs.NVIDIA_VISIBLE_DEVICES === `${uuid(1)},${uuid(0)}`,
        'Allocate: NVIDIA_VISIBLE_DEVICES by UUID', c.envs);
  check(JSON.stringify(c.cdi_devices.map((d) => d.name)) ===
        JSON.stringify([`nvidia.com/gpu=${uuid(1)}`, `nvidia.com/gpu=${uuid(0)}`]),
        'Allocate: CDI device names nvidia.com/gpu=<uuid>', c.cdi_devices);
  check(!('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE' in c.envs) && !('CUDA_MPS_PIPE_DIRECTORY' in c.envs) &&
        c.mounts.length === 0, 'Allocate: no MPS limits, pipe or mounts without MPS', c);
  await expectError(p.allocate([[uuid(2), uuid(2)]]), /asked twice/, 'Allocate: a duplicate device ID is refused (HAMi #1741)');
  await expectError(p.allocate([['GPU-nope']]), /unknown device ID/, 'Allocate: an unknown device ID is refused');
  const ps = await p.preStart([uuid(0)]);
  check(ps !== undefined, 'PreStartContainer answers', ps);

  // health: GPU 1 goes bad, then comes back
  const inv = lib.inventory(4, {1: {healthy: false, xid: 79}});
  lib.writeJson(t.invFile, inv);
  const bad = await w.waitFor((l) => l.length === 4 && l[1].health === 'Unhealthy');
  check(bad.filter((d) => d.health === 'Unhealthy').length === 1,
        'ListAndWatch streams GPU 1 Unhealthy, the others stay Healthy', bad);
  lib.writeJson(t.invFile, lib.inventory(4));
  const good = await w.waitFor((l) => l.every((d) => d.health === 'Healthy'));
  check(good.length === 4, 'ListAndWatch streams GPU 1 Healthy again', good);

  // the kubelet restarts: its socket goes and comes back (and it removes ours)
  w.cancel();
  p.close();
  await t.kubelet.stop();
  require('fs').unlinkSync(path.join(t.dir, 'nvidia-gpu.sock'));
  await lib.sleep(300);
  await t.kubelet.start();
  await t.kubelet.waitRegistrations((rr) => rr.length >= 2);
  check(t.kubelet.registrations[1].resource_name === 'nvidia.com/gpu',
        'registered again after the kubelet restarted', t.kubelet.registrations);
  const p2 = t.kubelet.plugin('nvidia-gpu.sock');
  const w2 = p2.watch();
  const again = await w2.waitFor((l) => l.length === 4);
  check(again.length === 4, 'the restarted plugin lists its devices to the new kubelet', again.length);
  w2.cancel();
  p2.close();
  await teardown(t);
}

async function timeSlicing() {
  const t = await setup('ts', lib.inventory(2), ['--time-slicing', '4']);
  const regs = await t.kubelet.waitRegistrations((r) => r.length >= 1);
  check(regs[0].resource_name === 'nvidia.com/gpu', 'time-slicing: still nvidia.com/gpu', regs[0]);
  const p = t.kubelet.plugin(regs[0].endpoint);
  const w = p.watch();
  const list = await w.waitFor((l) => l.length === 8);
  check(list.map((d) => d.ID).join(' ') ===
        [0, 1].flatMap((g) => [0, 1, 2, 3].map((k) => `${uuid(g)}::${k}`)).join(' '),
        'time-slicing: replica IDs <uuid>::<n>, four per GPU', list.map((d) => d.ID));
  const ids = list.map((d) => d.ID);
  const pref = await p.preferred([{available_deviceIDs: ids, must_include_deviceIDs: [], allocation_size: 2}]);
  const got = pref.container_responses[0].deviceIDs;
  check(got.length === 2 && got[0].split('::')[0] !== got[1].split('::')[0],
        'time-slicing: a preferred pair of replicas is on two GPUs', got);
  await expectError(p.allocate([[`${uuid(0)}::0`, `${uuid(0)}::1`]]), /two replicas/,
        'time-slicing: two replicas of one GPU for one container refused (NVIDIA #491)');
  const a = await p.allocate([[`${uuid(1)}::2`]]);
  check(a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === uuid(1),
        'time-slicing: a replica shows its GPU by UUID', a.container_responses[0].envs);
  w.cancel();
  p.close();
  await teardown(t);

  const t2 = await setup('tsr', lib.inventory(2), ['--time-slicing', '2', '--rename-by-default',
    '--fail-requests-greater-than-one']);
  const r2 = await t2.kubelet.waitRegistrations((r) => r.length >= 1);
  check(r2[0].resource_name === 'nvidia.com/gpu.shared' && r2[0].endpoint === 'nvidia-gpu.shared.sock',
        'renameByDefault: nvidia.com/gpu.shared on nvidia-gpu.shared.sock', r2[0]);
  const p2 = t2.kubelet.plugin(r2[0].endpoint);
  await expectError(p2.allocate([[`${uuid(0)}::0`, `${uuid(1)}::0`]]), /maximum request size for shared resources is 1/,
        'failRequestsGreaterThanOne: two shared devices refused');
  // per container, as NVIDIA's plugin checks each ContainerAllocateRequest
  // (internal/rm ValidateRequest): two containers of one replica each are
  // served, in one AllocateRequest as in two
  const two = await p2.allocate([[`${uuid(0)}::1`], [`${uuid(1)}::1`]]);
  check(two.container_responses.length === 2 &&
        two.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === uuid(0) &&
        two.container_responses[1].envs.NVIDIA_VISIBLE_DEVICES === uuid(1),
        'failRequestsGreaterThanOne: two containers of one replica each served', two.container_responses);
  await expectError(p2.allocate([[`${uuid(0)}::0`], [`${uuid(0)}::1`, `${uuid(1)}::0`]]),
        /maximum request size for shared resources is 1/,
        'failRequestsGreaterThanOne: the second container of a request asking two refused');
  p2.close();
  await teardown(t2);
}

async function mps() {
  const t = await setup('mps', lib.inventory(2), ['--mps', '4']);
  const regs = await t.kubelet.waitRegistrations((r) => r.length >= 1);
  const p = t.kubelet.plugin(regs[0].endpoint);
  const a = await p.allocate([[`${uuid(1)}::3`]]);
  const e = a.container_responses[0].envs;
  check(e.NVIDIA_VISIBLE_DEVICES === uuid(1) && e.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE === '25' &&
        e.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT === '0=20480M',
        'MPS: a quarter of the threads and of the 80 GiB', e);
  // the daemon's pipe directory and shm, as NVIDIA's plugin answers
  // (internal/plugin/mps.go, internal/mps/root.go; mpsRoot /run/nvidia/mps)
  const m = a.container_responses[0].mounts.map((x) => `${x.container_path}<-${x.host_path}`);
  check(e.CUDA_MPS_PIPE_DIRECTORY === '/mps/nvidia.com/gpu/pipe' &&
        m.join(' ') === '/mps/nvidia.com/gpu/pipe<-/run/nvidia/mps/nvidia.com/gpu/pipe /dev/shm<-/run/nvidia/mps/shm',
        'MPS: the control daemon\'s pipe directory and shm mounted', {e, m});
  await expectError(p.allocate([[`${uuid(0)}::0`, `${uuid(1)}::0`]]), /maximum request size/,
        'MPS: failRequestsGreaterThanOne by default');
  p.close();
  await teardown(t);
}

function migInventory(profiles0, profiles1) {
  const mk = (g, profiles) => profiles.map((pr, k) => ({uuid: `MIG-${g}${k}aaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee`,
    profile: pr, memory_mib: pr === '1g.10gb' ? 9856 : 40192}));
  return lib.inventory(2, {
    0: {mig_capable: true, mig_enabled: profiles0.length > 0, migs: mk(0, profiles0)},
    1: {mig_capable: true, mig_enabled: profiles1.length > 0, migs: mk(1, profiles1)},
  });
}

async function mig() {
  const t = await setup('mixed', migInventory(['1g.10gb', '1g.10gb', '3g.40gb'], []),
    ['--mig-strategy', 'mixed']);
  const regs = await t.kubelet.waitRegistrations((r) => r.length >= 3);
  const names = regs.map((r) => r.resource_name).sort();
  check(JSON.stringify(names) === JSON.stringify(['nvidia.com/gpu', 'nvidia.com/mig-1g.10gb', 'nvidia.com/mig-3g.40gb']),
        'MIG mixed: nvidia.com/gpu for the whole GPU, nvidia.com/mig-<profile> for the rest', regs);
  const one = regs.find((r) => r.resource_name === 'nvidia.com/mig-1g.10gb');
  check(one.endpoint === 'nvidia-mig-1g.10gb.sock', 'MIG mixed: socket nvidia-mig-1g.10gb.sock', one);
  const p = t.kubelet.plugin(one.endpoint);
  const w = p.watch();
  const l = await w.waitFor((x) => x.length === 2);
  check(l.every((d) => d.ID.startsWith('MIG-0')), 'MIG mixed: the two 1g.10gb devices by MIG UUID', l);
  const a = await p.allocate([[l[1].ID]]);
  check(a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === l[1].ID &&
        a.container_responses[0].cdi_devices[0].name === `nvidia.com/gpu=${l[1].ID}`,
        'MIG mixed: Allocate names the MIG device', a.container_responses[0]);
  w.cancel();
  p.close();
  await teardown(t);

  const t2 = await setup('single', migInventory(['1g.10gb', '1g.10gb'], ['1g.10gb']), ['--mig-strategy', 'single']);
  const r2 = await t2.kubelet.waitRegistrations((r) => r.length >= 1);
  const p2 = t2.kubelet.plugin(r2[0].endpoint);
  const w2 = p2.watch();
  const l2 = await w2.waitFor((x) => x.length === 3);
  check(r2[0].resource_name === 'nvidia.com/gpu' && l2.every((d) => d.ID.startsWith('MIG-')),
        'MIG single: the MIG devices as nvidia.com/gpu', {r: r2[0], l2});
  w2.cancel();
  p2.close();
  await teardown(t2);

  const dir = lib.tmpdir('bad');
  const invFile = path.join(dir, 'inventory.json');
  lib.writeJson(invFile, migInventory(['1g.10gb', '3g.40gb'], ['1g.10gb']));
  const bad = lib.startAgent(['--no-api', '--inventory', invFile, '--plugin-dir', dir, '--mig-strategy', 'single']);
  const r = await bad.done;
  check(r.code === 2 && /mig strategy single/.test(bad.log) && bad.log.trim().split('\n').length === 1,
        'MIG single over two profiles: one line, exit 2', {code: r.code, log: bad.log});
}

(async () => {
  try {
    await wholeGpus();
    await timeSlicing();
    await mps();
    await mig();
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  }
  lib.finish();
})();
