/**
 * The engine on Configure's review: one row says which engine will train (ours, or PyTorch
 * with its processes and device) and, for PyTorch, what the chosen Python's torch offers —
 * version, GPUs, bf16 — or why it cannot train, probed before anything runs. Choosing the row
 * opens the engine list: ours, then the PyTorch layouts this machine can run (one process;
 * two on the CPU; one per GPU where torch sees more than one).
 *
 * Leaves out: the Python and the probe themselves (training/pytorchEngine.ts) and the rest of
 * the review (configure.ts).
 */

import type { Draft } from './configureDraft';
import { applyDraft, engineText, estimateSpecOf } from './configureDraft';
import type { Settings } from './settings';
import type { Back, StepOptions, ValueItem } from './quickInput';
import { BACK, pickStep } from './quickInput';
import type { Services } from '../services';
import { torchSummary } from '../training/pytorchEngine';

/** A PyTorch layout the list offers. */
type Layout = Pick<Draft, 'engine' | 'processes' | 'device'>;

/** What the chosen PyTorch offers, in one line, for the draft (null for our engine). */
export function torchLine(s: Services, base: Settings, d: Draft): Promise<{ ok: boolean; line: string }> | null {
  if (d.engine !== 'pytorch') return null;
  return torchSummary(s, applyDraft(base, d), estimateSpecOf(base, d));
}

/** The review's engine row (its detail is the probe's line once it is known). */
export function engineRow<V>(d: Draft, value: V, probe: string | null): ValueItem<V> {
  return { label: `$(server-process) Engine: ${engineText(d)}`, value, description: 'change…', ...(probe !== null ? { detail: probe } : {}) };
}

/** The engine list; resolves to the draft with the engine chosen, BACK, or undefined (cancelled). */
export async function pickEngine(s: Services, base: Settings, d: Draft, step: StepOptions): Promise<Draft | Back | undefined> {
  const probe = torchSummary(s, applyDraft(base, { ...d, engine: 'pytorch', processes: 1, device: 'auto' }), estimateSpecOf(base, d));
  const layouts: Layout[] = [
    { engine: 'pytorch', processes: 1, device: 'auto' },
    { engine: 'pytorch', processes: 2, device: 'cpu' },
  ];
  const gpus = probe.then((p) => Number(/CUDA: (\d+) ×/.exec(p.line)?.[1] ?? 0));
  const ours: ValueItem<Layout> = { label: "Ours — WebAssembly on this machine's CPU", value: { engine: 'wasm', processes: d.processes, device: d.device }, description: 'in a worker thread', detail: 'Every core of this machine; nothing to install.' };
  const items = (line: string | null, ok: boolean, n: number): ValueItem<Layout>[] => [
    ours,
    ...[...layouts, ...(n > 1 ? [{ engine: 'pytorch' as const, processes: n, device: 'cuda' as const }] : [])].map((l): ValueItem<Layout> => ({
      label: `PyTorch — ${engineText(l).replace(/^PyTorch · /, '')}`,
      ...(ok ? { value: l } : {}),
      description: 'torchrun in a child process',
      detail: line ?? 'Looking for torch…',
    })),
  ];
  const current = d.engine === 'wasm' ? ours.value : layouts.find((l) => l.processes === d.processes && l.device === d.device);
  const r = await pickStep({
    ...step,
    placeholder: 'Which engine trains the run? (The run folder is the same; a run moves between engines.)',
    items: items(null, false, 0),
    busy: Promise.all([probe, gpus]).then(([p, n]) => items(p.line, p.ok, n)),
    ...(current ? { active: current } : {}),
  });
  return r === undefined || r === BACK ? r : { ...d, ...r };
}
