/**
 * The model tab: the architecture drawn as the paper's stacks (Vaswani et al. 2017, Figure 1:
 * N× encoder layers of self-attention + feed-forward, N× decoder layers of masked
 * self-attention + cross-attention + feed-forward, each sublayer with residual and LayerNorm),
 * with this run's sizes and architecture options (modelArchitecture.ts), parameters per module,
 * the memory estimate, training FLOPs per token and what the run is trained on.
 *
 * Leaves out: computing the numbers (the engine's estimate, sent in ModelInfo).
 */

import type { OptimizerPreset } from '../../src/protocol/data';
import type { ModelInfo } from '../../src/protocol/model';
import { architectureLine } from '../../src/common/architecture';
import { h, replaceChildren } from '../base/dom';
import { architecture } from './modelArchitecture';
import { formatBytes, formatCompact, formatCount, formatPercent } from '../../src/common/format';
import type { StoreEvent } from '../store';
import type { Panel, PanelContext } from './panel';

/** What the training memory estimate holds, with the optimizer state the run's optimizer keeps. */
function memoryParts(optimizer: OptimizerPreset | undefined): string {
  const state = optimizer === 'muon' ? 'Muon momentum, Adam moments, Newton–Schulz buffers' : 'Adam moments';
  return `weights, gradients, ${state} and activations`;
}

function paramsTable(info: ModelInfo): HTMLElement {
  const entries = Object.entries(info.paramsByModule);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return h(
    'table',
    { className: 'params', attrs: { 'aria-label': 'Parameters per module' } },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { attrs: { scope: 'col' } }, 'module'),
        h('th', { attrs: { scope: 'col' } }, 'parameters'),
        h('th', { attrs: { scope: 'col' } }, 'share'),
      ),
    ),
    h(
      'tbody',
      {},
      ...entries.map(([name, n]) => {
        const bar = h('span', { className: 'bar' });
        bar.style.width = `${((100 * n) / max).toFixed(1)}%`;
        return h(
          'tr',
          {},
          h('td', {}, name),
          h('td', { className: 'num' }, formatCount(n)),
          h('td', { className: 'bar-cell', attrs: { 'aria-label': formatPercent(n / Math.max(1, info.params)) } }, bar),
        );
      }),
      h(
        'tr',
        { className: 'total' },
        h('td', {}, 'total'),
        h('td', { className: 'num' }, formatCount(info.params)),
        h('td', {}),
      ),
    ),
  );
}

/** The model tab. */
export class ModelPanel implements Panel {
  readonly id = 'model' as const;
  readonly label = 'Model';
  readonly el = h('section', { className: 'panel model' });

  constructor(private readonly ctx: PanelContext) {}

  wants(ev: StoreEvent): boolean {
    return ev.kind === 'runs' || (ev.kind === 'run' && ev.parts.includes('status'));
  }

  render(): void {
    const run = this.ctx.run();
    const info = run?.summary.model;
    if (!run || !info) {
      replaceChildren(
        this.el,
        h('p', { className: 'empty' }, run ? 'This run has no model information yet.' : 'No run selected.'),
      );
      return;
    }
    const data = run.summary.data;
    replaceChildren(
      this.el,
      h('h3', {}, 'Architecture'),
      architecture(info.config),
      h(
        'dl',
        { className: 'facts' },
        h('dt', {}, 'architecture'),
        h('dd', {}, architectureLine(info.config)),
        h('dt', {}, 'parameters'),
        h('dd', {}, `${formatCompact(info.params)} (${formatCount(info.params)})`),
        h('dt', {}, 'memory (training, estimate)'),
        h('dd', {}, `${formatBytes(info.memoryBytes)} — ${memoryParts(run.summary.training?.optimizer)}`),
        h('dt', {}, 'FLOPs per token (training)'),
        h('dd', {}, `${formatCompact(info.flopsPerToken, 'FLOP')} — forward + backward ≈ 6 × parameters + attention`),
        h('dt', {}, 'backend'),
        h('dd', {}, info.backend),
        ...(data
          ? [
              h('dt', {}, 'data'),
              h(
                'dd',
                {},
                `${data.description} — ${formatCompact(data.trainTokens)} training / ` +
                  `${formatCompact(data.valTokens)} validation tokens` +
                  `${data.skipped.length ? `, ${data.skipped.length} file(s) skipped` : ''}`,
              ),
              ...(data.validation ? [h('dt', {}, 'validation'), h('dd', {}, data.validation.text)] : []),
            ]
          : []),
      ),
      h('h3', {}, 'Parameters per module'),
      paramsTable(info),
    );
  }
}
