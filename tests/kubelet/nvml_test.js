// nvml_test.js - the agent on NVML (the fake libnvidia-ml.so.1 of
// tests/fakenvml): the GPUs NVML lists advertised, an XID streamed as an
// Unhealthy device (fatal: XID 79) while an application XID (13) changes
// nothing, and the failures at start: no driver (one line, exit 3) and
// NVML failing to initialise (one line, exit 1, no socket left behind).
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check} = lib;

const api = loadApi(lib.protoPath());
const FAKE = process.env.GP_FAKENVML;

function fakeConfig(dir, extra = '') {
  const xids = path.join(dir, 'xids');
  fs.writeFileSync(xids, '');
  const conf = path.join(dir, 'nvml.conf');
  fs.writeFileSync(conf, `driver 535.104.05
cuda 12020
gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-f0 pci=00000000:07:00.0 pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=0 persistence=1 mig=0
gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-f1 pci=00000000:0F:00.0 pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=0 persistence=1 mig=0
xids ${xids}
${extra}`);
  return {conf, xids};
}

(async () => {
  if (!FAKE || !fs.existsSync(FAKE)) {
    console.log('skipped: the fake NVML (GP_FAKENVML) is not built');
    process.exit(77);
  }
  try {
    const dir = lib.tmpdir('nvml');
    const {conf, xids} = fakeConfig(dir);
    const kubelet = new Kubelet(api, dir);
    await kubelet.start();
    const agent = lib.startAgent(['--no-api', '--nvml', FAKE, '--plugin-dir', dir],
      {GPUPLANE_FAKE_NVML: conf});
    const regs = await kubelet.waitRegistrations((r) => r.length >= 1);
    const p = kubelet.plugin(regs[0].endpoint);
    const w = p.watch();
    const l = await w.waitFor((x) => x.length === 2);
    check(l[0].ID === 'GPU-f0' && l[1].ID === 'GPU-f1' && l.every((d) => d.health === 'Healthy'),
      'NVML: the two GPUs the driver lists, by UUID, Healthy', l);
    // the agent's XID event set made (the fake counts them in xids.sets): a
    // line appended before it exists is never reported
    const sets = () => { try { return Number(fs.readFileSync(xids + '.sets', 'utf8')); } catch (e) { return 0; } };
    await lib.waitUntil(() => sets() >= 1, 'the agent\'s XID event set created');
    fs.appendFileSync(xids, '0 13\n');
    await lib.sleep(600);
    check(w.lists[w.lists.length - 1].every((d) => d.health === 'Healthy'),
      'an application XID (13) leaves the GPU healthy', w.lists[w.lists.length - 1]);
    fs.appendFileSync(xids, '1 79\n');
    const bad = await w.waitFor((x) => x[1].health === 'Unhealthy');
    check(bad[0].health === 'Healthy', 'XID 79 on GPU 1 streamed as Unhealthy, GPU 0 still Healthy', bad);
    w.cancel();
    p.close();
    const r = await lib.stopAgent(agent);
    check(r.code === 0 && /1 health changes/.test(agent.log), 'the agent counted one health change', agent.log.split('\n').slice(-3));
    await kubelet.stop();

    const none = lib.startAgent(['--no-api', '--nvml', path.join(dir, 'no-such-libnvidia-ml.so.1'), '--plugin-dir', dir]);
    const rn = await none.done;
    check(rn.code === 3 && none.log.trim().split('\n').length === 1 && /NVML/.test(none.log),
      'no driver: one line, exit 3', {code: rn.code, log: none.log});

    const dir2 = lib.tmpdir('nvmlfail');
    const f = fakeConfig(dir2, 'init-fail 999\n');
    const failing = lib.startAgent(['--no-api', '--nvml', FAKE, '--plugin-dir', dir2], {GPUPLANE_FAKE_NVML: f.conf});
    const rf = await failing.done;
    check(rf.code === 1 && failing.log.trim().split('\n').length === 1 && !fs.existsSync(path.join(dir2, 'nvidia-gpu.sock')),
      'NVML failing at start: one line, exit 1, no socket (no zombie plugin)', {code: rf.code, log: failing.log});
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  }
  lib.finish();
})();
