// The "full disk" scenario of the end-to-end suite (`run.mjs --only diskfull`), in a real VS Code
// driven by Chromium: runs are kept in the workspace, whose runs folder is a small tmpfs; the
// run is paused after its first checkpoint (step 2500), the disk is filled below a checkpoint's room,
// and on resuming the run stops at its next checkpoint with the notification "… stopped: Disk
// full while saving the checkpoint at step N in DIR; the checkpoint of step M is kept — …", whose
// Resume, once the space is back, trains on past N. Needs root and a kernel that lets it mount a
// tmpfs (CI's machine does); elsewhere the scenario says so and is not run (the full-disk unit
// tests, which never skip, cover the behaviour with a disk that fills through the file layer).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sleep } from './lib/codeServer.mjs';
import { Workbench, expectVisible } from './lib/workbench.mjs';

const STEP = /step (\d+)\/(\d+)/;
/** Where the scenario keeps its runs, relative to the workspace (the session's settings say so). */
export const RUNS_FOLDER = '.attention-lab/runs';
/**
 * The session's settings beside FAST_TRAINING: runs in the workspace folder that is the small
 * disk; checkpoints every 2500 steps (the tiny model trains ~100 steps a second, so a pause asked
 * for after the first lands well before the second), few snapshots and validations between them.
 */
export const DISK_FULL_SETTINGS = {
  'attentionLab.runs.location': 'workspace',
  'attentionLab.runs.folder': RUNS_FOLDER,
  'attentionLab.training.steps': 6000,
  'attentionLab.training.checkpointEvery': 2500,
  'attentionLab.training.snapshotEvery': 1250,
  'attentionLab.training.evalEvery': 250,
};

/** The status bar's step once it has not moved for 1.5 s (the run paused). */
async function pausedStep(wb) {
  let last = -1;
  for (let i = 0; i < 120; i++) {
    const step = Number(STEP.exec((await wb.statusItem('Attention Lab:')) ?? '')?.[1] ?? -1);
    if (step === last && step > 0) return step;
    last = step;
    await sleep(1500);
  }
  throw new Error(`the run never paused (last step ${last})`);
}

/** Mounts a 16 MB tmpfs on the workspace's runs folder; false where mounting is not allowed. */
export function mountSmallDisk(workspace) {
  const dir = path.join(workspace, RUNS_FOLDER);
  fs.mkdirSync(dir, { recursive: true });
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function unmount(dir) {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' });
  } catch {
    // Not mounted (the scenario did not get that far).
  }
}

/** Runs the scenario; resolves true when every check passed (or when this machine cannot mount a disk). */
export async function runDiskFull(page, { shots, log, workspace }) {
  const disk = path.join(workspace, RUNS_FOLDER);
  if (!fs.readFileSync('/proc/mounts', 'utf8').includes(` ${disk} tmpfs `)) {
    log(
      'full-disk scenario NOT RUN: this machine does not let the test mount a tmpfs (the unit tests cover the behaviour)',
    );
    return true;
  }
  const wb = new Workbench(page, log);
  const shot = (name) => wb.screenshot(path.join(shots, name));
  const filler = path.join(disk, 'filler.bin');
  try {
    // 1. Train past the first checkpoint (step 2500), then pause.
    await wb.openActivity('Attention Lab');
    await wb.runCommand('Attention Lab: Train');
    await wb.waitForStatus('Attention Lab: step', (t) => Number(STEP.exec(t)?.[1] ?? 0) > 2500, 180_000);
    await wb.runCommand('Attention Lab: Pause / Resume Training');
    const at = await pausedStep(wb);
    log(`paused at step ${at}`);
    if (!(at > 2500 && at < 5000))
      throw new Error(
        `paused at step ${at}; the scenario needs a pause between the checkpoints of steps 2500 and 5000`,
      );
    // 2. Leave the disk 80% of a checkpoint's room (the metrics logged until then fit), then
    //    resume: the checkpoint of step 5000 cannot be written.
    const run = fs.readdirSync(disk).find((n) => n.startsWith('run-'));
    if (!run) throw new Error(`no run folder in ${disk}: ${fs.readdirSync(disk).join(', ')}`);
    const runDir = path.join(disk, run);
    const pair = ['model.safetensors', 'optimizer.safetensors'].reduce(
      (n, f) => n + fs.statSync(path.join(runDir, f)).size,
      0,
    );
    const st = fs.statfsSync(disk);
    const free = st.bavail * st.bsize;
    fs.writeFileSync(filler, Buffer.alloc(Math.max(0, free - Math.floor(pair * 0.8))));
    log(`checkpoint pair ${pair} bytes; filled the disk to ${fs.statfsSync(disk).bavail * st.bsize} bytes free`);
    await wb.runCommand('Attention Lab: Pause / Resume Training');
    // 3. The notification says what was being saved, which checkpoint is kept, and offers Resume.
    let notes = [];
    for (let i = 0; i < 120 && !notes.some((n) => n.includes('Disk full')); i++, await sleep(500))
      notes = await wb.notifications();
    const note = notes.find((n) => n.includes('Disk full')) ?? '';
    log(`notification: ${JSON.stringify(note)}`);
    const expected = `${run} stopped: Disk full while saving the checkpoint at step 5000 in ${runDir}; the checkpoint of step 2500 is kept — free space and \`train --resume ${runDir}\`.`;
    if (!note.startsWith(expected))
      throw new Error(
        `expected the notification ${JSON.stringify(expected)}; the notification centre holds ${JSON.stringify(notes)}`,
      );
    const left = fs.readdirSync(runDir).filter((n) => n.endsWith('.tmp'));
    if (left.length) throw new Error(`temporary files left in the run folder: ${left.join(', ')}`);
    const runJson = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'));
    if (runJson.status !== 'stopped' || runJson.error?.code !== 'disk/full' || runJson.step !== 2500)
      throw new Error(
        `run.json: ${JSON.stringify({ status: runJson.status, step: runJson.step, error: runJson.error })}`,
      );
    await page.locator('#status\\.notifications').click();
    const item = page.locator('.notifications-center .notification-list-item', { hasText: 'Disk full' }).first();
    await expectVisible(item, 'the full-disk notification in the notification centre');
    const status = (await wb.statusItem('Attention Lab:')) ?? '';
    if (!status.includes('stopped (disk full) at step 5000'))
      throw new Error(`the status bar says ${JSON.stringify(status)}`);
    await shot('d1-disk-full-notification.png');
    // 4. Space is back: Resume trains on from the kept checkpoint, past step 5000.
    fs.rmSync(filler);
    await item.locator('.monaco-button', { hasText: 'Resume' }).first().click();
    const resumed = await wb.waitForStatus(
      'Attention Lab: step',
      (t) => Number(STEP.exec(t)?.[1] ?? 0) > 5010,
      180_000,
    );
    log(`after Resume: "${resumed}"`);
    await wb.runCommand('Attention Lab: Stop Training');
    await wb.waitForStatus('Attention Lab:', (t) => /stopped at step/.test(t), 60_000);
    return true;
  } finally {
    fs.rmSync(filler, { force: true });
    unmount(disk);
  }
}
