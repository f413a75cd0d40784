// update_test.js - a device-set change updated in place (docs/node.md,
// "NVML at run time"): the agent on the fake NVML's live configuration
// (tests/fakenvml) rediscovering every 0.2 s; a GPU added is streamed as
// a new list on the open ListAndWatch stream of nvidia.com/gpu with no new
// registration (the kubelet's device manager replaces a resource's devices
// with each list: pkg/kubelet/cm/devicemanager/manager.go,
// genericDeviceUpdateCallback), and a MIG layout changed from 1g.10gb to
// 2g.20gb devices streams an empty list for nvidia.com/mig-1g.10gb, stops
// its server and registers nvidia.com/mig-2g.20gb, nvidia.com/gpu still
// registered once.
'use strict';
const fs = require('fs');
const path = require('path');
const lib = require('./lib');
lib.skipWithoutModules();
const {Kubelet, loadApi} = require('./kubelet');
const {check} = lib;

const api = loadApi(lib.protoPath());
const FAKE = process.env.GP_FAKENVML;

const gpu = (n, bus, mig) => `gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-u${n} pci=00000000:${bus}:00.0 pciid=0x20B210DE memory=81920 used=0 cc=8.0 util=0 persistence=1 mig=${mig}\n`;
const one = (s) => `mig uuid=MIG-u2-${s} gi=${s + 1} ci=0 profile=19 start=${s} size=1 memory=9728 gislices=1 cislices=1\n`;
const HDR = 'driver 535.104.05\ncuda 12020\nlive\n';
const BEFORE = HDR + gpu(0, '07', 0) + gpu(1, '0F', 0) + gpu(2, '47', 1) + one(0) + one(1);
const ADDED = HDR + gpu(0, '07', 0) + gpu(1, '0F', 0) + gpu(2, '47', 1) + one(0) + one(1) + gpu(3, '4E', 0);
const RELAID = HDR + gpu(0, '07', 0) + gpu(1, '0F', 0) + gpu(2, '47', 1) +
  'mig uuid=MIG-u2-big gi=3 ci=0 profile=14 start=0 size=2 memory=19968 gislices=2 cislices=2\n' + gpu(3, '4E', 0);

function write(file, text) {
  fs.writeFileSync(file + '.tmp', text);
  fs.renameSync(file + '.tmp', file); // the fake reads it whole or not at all
}

(async () => {
  if (!FAKE || !fs.existsSync(FAKE)) {
    console.log('skipped: the fake NVML (GP_FAKENVML) is not built');
    process.exit(77);
  }
  let agent, kubelet;
  try {
    const dir = lib.tmpdir('upd');
    const conf = path.join(dir, 'nvml.conf');
    write(conf, BEFORE);
    kubelet = new Kubelet(api, dir);
    await kubelet.start();
    agent = lib.startAgent(['--no-api', '--nvml', FAKE, '--plugin-dir', dir, '--mig-strategy', 'mixed',
      '--rediscover-s', '0.2'], {GPUPLANE_FAKE_NVML: conf});
    const regs = await kubelet.waitRegistrations((r) => r.length >= 2);
    const names = () => kubelet.registrations.map((r) => r.resource_name);
    check(names().sort().join(' ') === 'nvidia.com/gpu nvidia.com/mig-1g.10gb', 'two resources registered', names());
    const gp = kubelet.plugin(regs.find((r) => r.resource_name === 'nvidia.com/gpu').endpoint);
    const mp = kubelet.plugin(regs.find((r) => r.resource_name === 'nvidia.com/mig-1g.10gb').endpoint);
    const gw = gp.watch(), mw = mp.watch();
    await gw.waitFor((l) => l.length === 2);
    await mw.waitFor((l) => l.length === 2);

    // a GPU added: a new list on the open stream, no new registration
    write(conf, ADDED);
    const three = await gw.waitFor((l) => l.length === 3);
    check(three.map((d) => d.ID).join(' ') === 'GPU-u0 GPU-u1 GPU-u3' && three.every((d) => d.health === 'Healthy'),
      'nvidia.com/gpu: the added GPU streamed on the open ListAndWatch stream', three);
    await lib.sleep(600);
    check(kubelet.registrations.length === 2 && !gw.ended && !mw.ended,
      'no new registration, both streams still open', {regs: names(), ended: [gw.ended, mw.ended]});
    const a = await gp.allocate([['GPU-u3']]);
    check(a.container_responses[0].envs.NVIDIA_VISIBLE_DEVICES === 'GPU-u3', 'the added GPU is allocated on the same socket',
      a.container_responses[0].envs);

    // the MIG layout changed: 1g.10gb gone, 2g.20gb new
    write(conf, RELAID);
    const empty = await mw.waitFor((l) => l.length === 0);
    check(empty.length === 0, 'nvidia.com/mig-1g.10gb: an empty list streamed (capacity 0)', empty);
    await kubelet.waitRegistrations((r) => r.some((x) => x.resource_name === 'nvidia.com/mig-2g.20gb'));
    const big = kubelet.plugin('nvidia-mig-2g.20gb.sock');
    const bw = big.watch();
    const bl = await bw.waitFor((l) => l.length === 1);
    check(bl[0].ID === 'MIG-u2-big', 'nvidia.com/mig-2g.20gb: registered and listing the new MIG device', bl);
    // a second after the empty list (docs/node.md): waited for, not slept
    // out, so that a slow machine is no failure
    const stopped = () => mw.ended && !fs.existsSync(path.join(dir, 'nvidia-mig-1g.10gb.sock'));
    await lib.waitUntil(stopped, 'the server of nvidia.com/mig-1g.10gb stopped').catch(() => {});
    check(stopped(),
      'the server of nvidia.com/mig-1g.10gb stopped, its socket removed', {ended: mw.ended});
    check(names().filter((n) => n === 'nvidia.com/gpu').length === 1 && kubelet.registrations.length === 3 && !gw.ended,
      'nvidia.com/gpu registered once, its stream still open; three registrations in all', names());
    for (const w of [gw, mw, bw]) w.cancel();
    for (const p of [gp, mp, big]) p.close();
  } catch (e) {
    check(false, 'no exception', e.stack || String(e));
  }
  if (agent) {
    const r = await lib.stopAgent(agent);
    check(r.code === 0, 'agent stops cleanly', {code: r.code, log: agent.log.split('\n').slice(-6)});
  }
  if (kubelet) await kubelet.stop();
  lib.finish();
})();
