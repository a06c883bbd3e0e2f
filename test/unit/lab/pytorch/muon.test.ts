/**
 * The PyTorch trainer's Muon (python/attention_lab_trainer/muon.py): its Newton–Schulz leaves the
 * singular values near 1, three steps of Muon + AdamW land on test/golden/muon.safetensors to
 * 1e-5 (the golden our engine matches too), a fused tensor's matrices are orthogonalised one by
 * one, a Muon run trained in PyTorch resumes in ours (Muon's momentum where Adam's moments go)
 * with the losses of a run trained in ours alone, and a checkpoint of the other optimizer is
 * refused in the engine's one line.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../../../src/engine/io/safetensors';
import { trainSpecOf } from '../../../../src/lab/runs/runSpec';
import { lossGap, python, runPath, stepLines, torchOptions, trainSession } from './torchRuns';

const GOLDEN = path.resolve(__dirname, '../../../golden/muon.safetensors');

describe("the trainer's Muon", () => {
  it('orthogonalises wide and tall random matrices: singular values in [0.65, 1.2]', () => {
    const out = python(`
import json, torch
from attention_lab_trainer.muon import orthogonalize
torch.manual_seed(5)
res = []
for rows, cols in [(8, 32), (32, 8), (16, 48), (48, 16), (12, 20)]:
    g = torch.randn(rows, cols) * 3
    s = torch.linalg.svdvals(orthogonalize(g))
    s0 = torch.linalg.svdvals(g)
    res.append([float(s.min()), float(s.max()), float(s0.max() / s0.min()), list(orthogonalize(g).shape)])
print(json.dumps(res))`);
    for (const [lo, hi, spread, shape] of JSON.parse(out) as [number, number, number, number[]][]) {
      expect(spread).toBeGreaterThan(2);
      expect(lo).toBeGreaterThan(0.65);
      expect(hi).toBeLessThan(1.2);
      expect(shape).toHaveLength(2);
    }
  });

  it("three steps of Muon + AdamW land on the golden's parameters within 1e-5", () => {
    const out = python(`
import json, torch
from attention_lab_trainer.files import read_safetensors
from attention_lab_trainer.muon import build_muon_adamw
t, meta = read_safetensors(${JSON.stringify(GOLDEN)})
o = json.loads(meta["optimizer"]); segs = json.loads(meta["segments"]); lrs = json.loads(meta["lrs"])
params = {s["name"]: torch.nn.Parameter(t["param." + s["name"]].clone()) for s in segs}
opt = build_muon_adamw(o, list(params.values()), {params[s["name"]]: None for s in segs if s["hidden"]})
gaps = []
for step in (1, 2, 3):
    for n, p in params.items():
        p.grad = t[f"grad.{step}.{n}"].clone()
    for g in opt.param_groups:
        g["lr"] = lrs[step - 1]
    opt.step()
    gaps.append({n: float((p.detach() - t[f"after.{step}.{n}"]).abs().max()) for n, p in params.items()})
print(json.dumps(gaps))`);
    const gaps = JSON.parse(out) as Record<string, number>[];
    expect(gaps).toHaveLength(3);
    for (const g of gaps) {
      expect(Object.keys(g)).toHaveLength(7);
      for (const [name, gap] of Object.entries(g)) expect(gap, name).toBeLessThan(1e-5);
    }
  });

  it("orthogonalises each matrix of a fused tensor (c_attn's q, k, v) on its own", () => {
    const out = python(`
import json, torch
from attention_lab_trainer.muon import Muon
torch.manual_seed(2)
a, b, ga, gb = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
fused = torch.nn.Parameter(torch.cat([a, b])); fused.grad = torch.cat([ga, gb])
pa, pb = torch.nn.Parameter(a.clone()), torch.nn.Parameter(b.clone()); pa.grad, pb.grad = ga, gb
whole = torch.nn.Parameter(torch.cat([a, b])); whole.grad = torch.cat([ga, gb])
Muon([fused], {fused: [(0, 4), (4, 8)]}, 0.01, 2.0, 0.95, 0.1).step()
Muon([pa, pb], {pa: None, pb: None}, 0.01, 2.0, 0.95, 0.1).step()
Muon([whole], {whole: None}, 0.01, 2.0, 0.95, 0.1).step()
sep = torch.cat([pa.detach(), pb.detach()])
print(json.dumps([float((fused.detach() - sep).abs().max()), float((whole.detach() - sep).abs().max())]))`);
    const [fusedGap, wholeGap] = JSON.parse(out) as [number, number];
    expect(fusedGap).toBeLessThan(1e-7);
    expect(wholeGap).toBeGreaterThan(1e-4); // orthogonalising the stack would be another update
  });

  it('refuses a checkpoint of the other optimizer in the engine’s one line', () => {
    const out = python(`
import json
from attention_lab_trainer.files import UserError
from attention_lab_trainer.state import check_optimizer_kind
msgs = []
for saved, now in [('{"type":"adamw"}', "muon"), ('{"type":"muon"}', "adamw"), (None, "muon"), ('{"type":"adam"}', "adamw")]:
    try:
        check_optimizer_kind(saved, now)
        msgs.append(None)
    except UserError as e:
        msgs.append(str(e))
print(json.dumps(msgs))`);
    const [a, b, c, d] = JSON.parse(out) as (string | null)[];
    expect(a).toBe(
      "optimizer.safetensors holds AdamW's optimizer state but this run now trains with Muon; resume it with " +
        'optimizer adamw (training.optimizer in run.json), or start a new run to train with muon.',
    );
    expect(b).toMatch(/holds Muon's optimizer state but this run now trains with AdamW; resume it with optimizer muon/);
    expect(c).toMatch(/holds AdamW's/);
    expect(d).toBeNull();
  });
});

describe('a Muon + WSD run across engines', () => {
  // reverse: an encoder-decoder; induction: a decoder-only model, whose c_attn PyTorch fuses (three matrices).
  it.each(['reverse', 'induction'] as const)(
    '%s: trained in PyTorch to step 6 and resumed in ours, it follows a run trained in ours alone',
    async (task) => {
      const spec = trainSpecOf(
        { kind: 'task', task },
        {
          steps: 12,
          snapshotEvery: 0,
          evalEvery: 0,
          checkpointEvery: 0,
          optimizer: 'muon',
          schedule: 'wsd',
          seqLen: task === 'induction' ? 16 : undefined,
        },
      );
      const ours = runPath('ours');
      await trainSession(ours, spec);
      const mixed = runPath('mixed');
      await trainSession(mixed, spec, { stopAt: 6, pytorch: torchOptions() });
      // The trainer stepped the manifest's hidden matrices with Muon: momentum in adam.m, nothing in adam.v.
      const manifest = JSON.parse(fs.readFileSync(path.join(mixed, 'pytorch', 'manifest.json'), 'utf8')) as {
        params: { name: string; shape: number[]; hidden: boolean }[];
      };
      const state = decodeSafetensors(
        new Uint8Array(fs.readFileSync(path.join(mixed, 'optimizer.safetensors'))),
        'optimizer.safetensors',
      );
      expect(JSON.parse(state.metadata.optimizer as string)).toMatchObject({ type: 'muon', muonLr: 0.02 });
      const m = state.tensors.get('adam.m')?.data as Float32Array;
      const v = state.tensors.get('adam.v')?.data as Float32Array;
      let at = 0;
      let hidden = 0;
      for (const p of manifest.params) {
        const n = p.shape.reduce((a, b) => a * b, 1);
        const ms = m.subarray(at, at + n);
        const vs = v.subarray(at, at + n);
        if (p.hidden) {
          hidden++;
          expect(
            vs.every((x) => x === 0),
            p.name,
          ).toBe(true);
          expect(
            ms.some((x) => x !== 0),
            p.name,
          ).toBe(true);
        } else if (p.shape.length === 2)
          expect(
            vs.some((x) => x > 0),
            p.name,
          ).toBe(true);
        at += n;
      }
      expect(hidden).toBeGreaterThanOrEqual(6);
      await trainSession(mixed, spec, { resume: true });
      expect(stepLines(mixed).map((s) => s.lr)).toEqual(stepLines(ours).map((s) => s.lr));
      expect(lossGap(stepLines(ours), stepLines(mixed))).toBeLessThan(1e-3);
      // The losses moved: a Muon run that learned nothing would pass the comparison above trivially.
      const losses = stepLines(ours).map((s) => s.loss);
      expect(losses.at(-1)).toBeLessThan((losses[0] as number) - 0.05);
    },
    300_000,
  );
});
