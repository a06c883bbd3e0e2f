/**
 * The README.md of an export folder (exportFolder.ts): what each file is, the lines of
 * PyTorch (or, for `--format hf`, of transformers) that load the model (Attention Lab's
 * reference model, reference.py, which the folder carries, and nanoGPT's model.py when the
 * architecture is nanoGPT's), and the example
 * `attention-lab score` computed at export time, with the command in the folder that
 * reproduces it in PyTorch. Everything it runs is in the folder: a .vsix user has no
 * scripts/ of Attention Lab's repository. Its first line marks it generated, so training on
 * a workspace that holds an export skips it.
 *
 * Leaves out: computing anything (the caller passes the numbers).
 */

import type { ModelConfig } from '../../engine/config';
import type { SpecialIds } from '../../engine/tokenizers/special';
import { formatLoss, formatNumber, formatPerplexity } from '../../common/format';
import type { TokenizerType } from '../../protocol/data';

/** The example's score, as `attention-lab score` computes it. */
export interface ExportExample {
  readonly text: string;
  /** The source of an encoder-decoder's example, else null. */
  readonly source: string | null;
  /** Scored tokens (an encoder-decoder's closing EOS included). */
  readonly tokens: number;
  /** Σ log p over them, in nats. */
  readonly logprobSum: number;
  /** The ids scored (BOS first), when known. */
  readonly ids?: readonly number[];
}

/** What the README describes. */
export interface ReadmeFacts {
  /** The layout: ours under PyTorch names, or Hugging Face's LlamaForCausalLM (exportHf.ts). Default pytorch. */
  readonly format?: 'pytorch' | 'hf';
  readonly name: string;
  readonly step: number;
  readonly config: ModelConfig;
  readonly tokType: TokenizerType;
  /** vocab.json + merges.txt were written. */
  readonly gpt2Files: boolean;
  /** The run's tokenizer is an imported model's Hugging Face one, written as tokenizer.json + tokenizer_config.json. */
  readonly hfTokenizer?: boolean;
  /** The tokenizer's ids of the special roles (ours 0..3; GPT-2's 50256 for BOS and EOS). */
  readonly specialIds: SpecialIds;
  readonly example: ExportExample | null;
  readonly warnings: readonly string[];
}

/** The README's row for an imported model's own tokenizer files. */
const HF_TOKENIZER_ROW =
  "| `tokenizer.json`, `tokenizer_config.json` | the model's Hugging Face tokenizer as it was imported " +
  "(Python's `tokenizers` and transformers read them; `lab_tokenizers.py` uses `tokenizers`) |";

const NANOGPT_FIELDS = "('block_size', 'vocab_size', 'n_layer', 'n_head', 'n_embd', 'dropout', 'bias')";

function specialsNote(ids: SpecialIds): string {
  const own = ids.pad === 0 && ids.bos === 1 && ids.eos === 2 && ids.unk === 3;
  return own
    ? '`<pad> <bos> <eos> <unk>` = ids 0–3'
    : `BOS ${ids.bos}, EOS ${ids.eos}${ids.pad < 0 ? ', no PAD' : `, PAD ${ids.pad}`}`;
}

function fileTable(f: ReadmeFacts): string[] {
  const names = f.config.kind === 'decoder-only' ? "nanoGPT's `GPT`" : "the seed notebook's `Transformer`";
  return [
    '| file | what it is |',
    '|---|---|',
    `| \`model.safetensors\` | the weights, fp32, under ${names} state_dict names (Linear weights \`[out, in]\`) |`,
    "| `config.json` | the PyTorch class's constructor fields, and `attention_lab`: Attention Lab's " +
      "whole model config, the tokenizer's special ids, and the example below |",
    f.hfTokenizer === true
      ? HF_TOKENIZER_ROW
      : `| \`tokenizer.json\` | Attention Lab's ${f.tokType === 'bpe' ? 'byte-level BPE' : 'character'} ` +
        `tokenizer, as the run saved it |`,
    ...(f.gpt2Files
      ? [
          `| \`vocab.json\`, \`merges.txt\` | the same BPE in GPT-2's format (what Hugging Face's ` +
            `\`GPT2Tokenizer\` reads), same ids; special tokens are listed under their text ` +
            `(${specialsNote(f.specialIds)}) |`,
        ]
      : []),
    "| `reference.py` | Attention Lab's model in PyTorch, built from `attention_lab.config` (the same logits) |",
    '| `safetensors_io.py`, `lab_tokenizers.py` | a safetensors reader (numpy only) and the ' +
      'tokenizer, for the lines below |',
    '| `score_export.py` | scores a text the way `attention-lab score` does: the check below |',
  ];
}

function exampleLines(f: ReadmeFacts): string[] {
  const e = f.example;
  if (e === null)
    return [
      'No example was scored at export time:',
      ...f.warnings.filter((w) => w.startsWith('no example')).map((w) => `- ${w}`),
    ];
  const mean = -e.logprobSum / Math.max(1, e.tokens);
  const cli =
    e.source === null
      ? `attention-lab score --run RUN_DIR --text ${JSON.stringify(e.text)}`
      : `attention-lab score --run RUN_DIR --src ${JSON.stringify(e.source)} --tgt ${JSON.stringify(e.text)}`;
  return [
    `At export (step ${f.step}), \`${cli}\` gave:`,
    '',
    `- ${e.tokens} scored tokens, total log-probability **${formatNumber(e.logprobSum, 4)} nats**`,
    `- loss ${formatLoss(mean)} nats/token, perplexity ${formatPerplexity(Math.exp(mean))}`,
    '',
    'The same number from PyTorch (it tokenizes with the files here, puts BOS first as `score` ' +
      'does, and slides windows over text longer than the context):',
    '',
    '```',
    'python3 score_export.py .   # in this folder; or: --text "…" (--src "…" for an encoder-decoder)',
    '```',
  ];
}

function decoderLines(f: ReadmeFacts): string[] {
  const c = f.config;
  const nano =
    c.norm === 'pre' &&
    c.positional === 'learned' &&
    c.activation === 'gelu' &&
    c.tieEmbeddings &&
    !c.embedScale &&
    c.dFF === 4 * c.dModel &&
    c.layerNormEps === 1e-5;
  return [
    "Score a text by hand (decoder-only: BOS, then the text's ids; no EOS):",
    '',
    '```python',
    'import torch.nn.functional as F',
    'bos = json.load(open("config.json"))["attention_lab"]["tokenizer"]["special_ids"]["bos"]',
    'from lab_tokenizers import load_export_tokenizer',
    'token_ids = load_export_tokenizer(".", ' +
      'json.load(open("config.json"))["attention_lab"]["tokenizer"]).encode("some text")',
    'ids = torch.tensor([[bos] + token_ids])',
    'with torch.no_grad():',
    '    logp = F.log_softmax(model(ids[:, :-1]), -1)  # (1, T, V); keep T within block_size',
    'print(logp[0].gather(1, ids[0, 1:, None]).sum())  # total log-probability, nats',
    '```',
    '',
    ...(nano
      ? [
          "This model is nanoGPT's architecture, so nanoGPT's `model.py` loads it too (only its " +
            'causal-mask buffers are missing):',
          '',
          '```python',
          'from model import GPT, GPTConfig                 # nanoGPT',
          `gpt = GPT(GPTConfig(**{k: json.load(open("config.json"))[k] for k in ${NANOGPT_FIELDS}}))`,
          'gpt.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items()}, strict=False)',
          '```',
          '',
        ]
      : []),
  ];
}

/** The README.md of a `--format hf` export: what each file is and the lines of transformers that load it. */
function hfReadme(f: ReadmeFacts): string {
  const e = f.example;
  const fits = e?.ids !== undefined && e.ids.length - 1 <= f.config.maxLen;
  return [
    "<!-- This file was generated by Attention Lab's export (training on a folder skips it). -->",
    `# ${f.name}`,
    '',
    `A Llama-shaped decoder trained with Attention Lab, exported at step ${f.step} in Hugging Face's ` +
      '`LlamaForCausalLM` layout.',
    '',
    '| file | what it is |',
    '|---|---|',
    '| `model.safetensors` | the weights, fp32, under `LlamaForCausalLM` names (`model.embed_tokens`, ' +
      '`model.layers.N.self_attn.q_proj` …, `mlp.gate_proj`, `model.norm`, `lm_head`) |',
    "| `config.json` | `LlamaConfig`'s fields, and `attention_lab`: Attention Lab's whole model config, the " +
      "tokenizer's special ids, and the example below with its ids |",
    f.hfTokenizer === true
      ? HF_TOKENIZER_ROW
      : "| `attention_lab_tokenizer.json` | Attention Lab's " +
        `${f.tokType === 'bpe' ? 'byte-level BPE' : 'character'} tokenizer, as the run saved it (not the ` +
        "format of Hugging Face's `tokenizers`) |",
    ...(f.gpt2Files
      ? [
          "| `vocab.json`, `merges.txt` | the same BPE in GPT-2's format (`GPT2Tokenizer.from_pretrained('.')`), " +
            `same ids (${specialsNote(f.specialIds)}) |`,
        ]
      : []),
    '| `lab_tokenizers.py` | the tokenizer in Python, for the lines below |',
    '',
    '## Load it with transformers',
    '',
    '```python',
    'import json, torch',
    'import torch.nn.functional as F',
    'from transformers import LlamaForCausalLM',
    'from lab_tokenizers import load_export_tokenizer',
    '',
    'model = LlamaForCausalLM.from_pretrained(".", torch_dtype=torch.float32).eval()',
    'lab = json.load(open("config.json"))["attention_lab"]',
    "ids = torch.tensor([[lab['tokenizer']['special_ids']['bos']] + " +
      "load_export_tokenizer('.', lab['tokenizer']).encode('some text')])",
    'with torch.no_grad():',
    '    logp = F.log_softmax(model(ids[:, :-1]).logits.double(), -1)  # keep ids within max_position_embeddings',
    'print(logp[0].gather(1, ids[0, 1:, None]).sum().item())  # total log-probability, nats',
    '```',
    '',
    '## The example',
    '',
    ...(e === null
      ? exampleLines(f)
      : [
          `At export (step ${f.step}), \`attention-lab score --run RUN_DIR --text ${JSON.stringify(e.text)}\` gave ` +
            `${e.tokens} scored tokens, total log-probability **${formatNumber(e.logprobSum, 4)} nats**.`,
          ...(fits
            ? [
                '`attention_lab.example.ids` holds its ids (BOS first): the lines above with ' +
                  "`ids = torch.tensor([lab['example']['ids']])` print the same number.",
              ]
            : [
                'The example is longer than the context, so `score` slid windows over it; score a text ' +
                  'within max_position_embeddings tokens to compare.',
              ]),
        ]),
    '',
    '## Other architectures',
    '',
    'Runs that Llama cannot express (other positions, norms or activations, QK-norm, soft-caps, a window, ' +
      'the parallel residual …) export with `attention-lab export --format pytorch`: that folder carries ' +
      "`reference.py`, the model Attention Lab's PyTorch engine trains, which builds every option from " +
      'config.json and loads the weights with `load_state_dict`.',
    '',
  ].join('\n');
}

/** The README.md text of an export folder. */
export function exportReadme(f: ReadmeFacts): string {
  if (f.format === 'hf') return hfReadme(f);
  const kind =
    f.config.kind === 'decoder-only' ? 'decoder-only (GPT-style)' : "encoder-decoder (the paper's Transformer)";
  const notes = f.warnings.filter((w) => !w.startsWith('no example'));
  return [
    // The generated-file marker the corpus skips (data/codeFiles.ts), so an export saved inside a
    // workspace does not become training data of the default **/*.{md,txt} glob.
    "<!-- This file was generated by Attention Lab's export (training on a folder skips it). -->",
    `# ${f.name}`,
    '',
    `A ${kind} model trained with Attention Lab, exported at step ${f.step}.`,
    '',
    ...fileTable(f),
    '',
    '## Load it in PyTorch',
    '',
    "With Attention Lab's reference model, `reference.py` in this folder (the model Attention Lab's " +
      'PyTorch engine trains: it reads the `attention_lab.config` block, builds every option — RoPE, ' +
      'ALiBi, RMSNorm, SwiGLU, grouped-query attention, QK-norm, soft-caps, windows … — and gives the ' +
      'same logits), run in this folder:',
    '',
    '```python',
    'import json, torch',
    'from reference import build_model',
    'from safetensors_io import read_safetensors      # or: from safetensors.numpy import load_file',
    '',
    'model = build_model(json.load(open("config.json"))["attention_lab"]["config"]).eval()',
    'tensors, _ = read_safetensors("model.safetensors")',
    '# Sinusoidal tables are rebuilt by the model, so a stored one (`….pe`) is skipped:',
    'model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in tensors.items() if not ' +
      'k.endswith(".pe")}, strict=False)',
    '```',
    '',
    ...(f.config.kind === 'decoder-only' ? decoderLines(f) : []),
    '## The example',
    '',
    ...exampleLines(f),
    ...(notes.length ? ['', '## Differences and omissions', '', ...notes.map((w) => `- ${w}`)] : []),
    '',
  ].join('\n');
}
