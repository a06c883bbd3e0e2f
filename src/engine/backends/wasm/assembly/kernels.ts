/**
 * Entry of the WebAssembly kernel module: the kernel table, the `run` call the TypeScript
 * side makes for every kernel, and the helper threads' loop.
 *
 * Calling convention: the caller writes a kernel's arguments as f64 slots into the control
 * block (threads.ts), then calls run(kernel, nChunks, helpers). Each kernel's `…Part(i, n)`
 * computes chunk i of n (the same code whatever thread runs it). Kernel ids are exported as
 * globals (K_*) so the TypeScript side reads them from the module instead of repeating them.
 *
 * Leaves out: the kernels themselves (one file per family) and memory management (the
 * TypeScript side allocates everything, including every scratch area).
 */

import { adamPart, sumSquaresPart } from './adam';
import { attentionBackwardPart } from './attentionBackward';
import { attentionForwardPart } from './attentionForward';
import { crossEntropyBackwardPart, crossEntropyForwardPart } from './loss';
import { matmulPart } from './matmul';
import {
  layernormBackwardDwPart,
  layernormBackwardDxPart,
  layernormForwardPart,
  rmsnormBackwardDwPart,
  rmsnormBackwardDxPart,
  rmsnormForwardPart,
} from './norm';
import {
  addBiasPart,
  addPart,
  biasBackwardPart,
  dropoutBackwardPart,
  dropoutForwardPart,
  dropoutMaskPart,
  embeddingBackwardPart,
  embeddingForwardPart,
  fillPart,
  geluBackwardPart,
  geluForwardPart,
  geluTanhBackwardPart,
  geluTanhForwardPart,
  mulPart,
  positionalBackwardPart,
  positionalForwardPart,
  relu2BackwardPart,
  relu2ForwardPart,
  reluBackwardPart,
  reluForwardPart,
  scalePart,
  siluBackwardPart,
  siluForwardPart,
  softcapBackwardPart,
  softcapForwardPart,
} from './pointwise';
import { ropePart } from './rope';
import { softmaxBackwardPart, softmaxForwardPart } from './softmax';
import {
  argF,
  argI,
  argP,
  chunkDone,
  chunksOf,
  claim,
  helperStart,
  jobKernel,
  post,
  setControl,
  waitDone,
  waitJob,
} from './threads';

export { attentionScratchBytes } from './attentionForward';
export { matmulScratchBytes } from './matmul';
export { sumSquaresChunks } from './adam';
export { sumF64 } from './loss';
export {
  CTL_BYTES,
  MAX_ARGS,
  MAX_THREADS,
  CTL_ARGS,
  CTL_SCRATCH,
  CTL_READY,
  CTL_FAILED,
  CTL_DONE,
  stopHelpers,
  setControl,
} from './threads';

export const K_MATMUL: i32 = 0;
export const K_FILL: i32 = 1;
export const K_SCALE: i32 = 2;
export const K_ADD: i32 = 3;
export const K_SUM_SQUARES: i32 = 4;
export const K_ADD_BIAS: i32 = 5;
export const K_BIAS_BACKWARD: i32 = 6;
export const K_EMBEDDING_FORWARD: i32 = 7;
export const K_EMBEDDING_BACKWARD: i32 = 8;
export const K_POSITIONAL_FORWARD: i32 = 9;
export const K_POSITIONAL_BACKWARD: i32 = 10;
export const K_LAYERNORM_FORWARD: i32 = 11;
export const K_LAYERNORM_BACKWARD_DX: i32 = 12;
export const K_LAYERNORM_BACKWARD_DW: i32 = 13;
export const K_RELU_FORWARD: i32 = 14;
export const K_RELU_BACKWARD: i32 = 15;
export const K_GELU_FORWARD: i32 = 16;
export const K_GELU_BACKWARD: i32 = 17;
export const K_DROPOUT_FORWARD: i32 = 18;
export const K_DROPOUT_BACKWARD: i32 = 19;
export const K_SOFTMAX_FORWARD: i32 = 20;
export const K_SOFTMAX_BACKWARD: i32 = 21;
export const K_ATTENTION_FORWARD: i32 = 22;
export const K_ATTENTION_BACKWARD: i32 = 23;
export const K_CROSS_ENTROPY_FORWARD: i32 = 24;
export const K_CROSS_ENTROPY_BACKWARD: i32 = 25;
export const K_ADAM: i32 = 26;
export const K_DROPOUT_MASK: i32 = 27;
export const K_GELU_TANH_FORWARD: i32 = 28;
export const K_GELU_TANH_BACKWARD: i32 = 29;
export const K_RMSNORM_FORWARD: i32 = 30;
export const K_RMSNORM_BACKWARD_DX: i32 = 31;
export const K_RMSNORM_BACKWARD_DW: i32 = 32;
export const K_ROPE: i32 = 33;
export const K_SILU_FORWARD: i32 = 34;
export const K_SILU_BACKWARD: i32 = 35;
export const K_RELU2_FORWARD: i32 = 36;
export const K_RELU2_BACKWARD: i32 = 37;
export const K_MUL: i32 = 38;
export const K_SOFTCAP_FORWARD: i32 = 39;
export const K_SOFTCAP_BACKWARD: i32 = 40;

/** Runs chunk `chunk` of `nChunks` of `kernel`, reading its arguments from the control block. */
function dispatch(kernel: i32, part: i32, parts: i32): void {
  switch (kernel) {
    case K_MATMUL:
      matmulPart(
        part,
        parts,
        argP(0),
        argP(1),
        argP(2),
        argI(3),
        argI(4),
        argI(5),
        argI(6) != 0,
        argI(7) != 0,
        argI(8) != 0,
      );
      break;
    case K_FILL:
      fillPart(part, parts, argP(0), argI(1), <f32>argF(2));
      break;
    case K_SCALE:
      scalePart(part, parts, argP(0), argI(1), <f32>argF(2));
      break;
    case K_ADD:
      addPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_SUM_SQUARES:
      sumSquaresPart(part, parts, argP(0), argI(1), argP(2));
      break;
    case K_ADD_BIAS:
      addBiasPart(part, parts, argP(0), argP(1), argI(2), argI(3));
      break;
    case K_BIAS_BACKWARD:
      biasBackwardPart(part, parts, argP(0), argP(1), argI(2), argI(3));
      break;
    case K_EMBEDDING_FORWARD:
      embeddingForwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), argI(4), <f32>argF(5));
      break;
    case K_EMBEDDING_BACKWARD:
      embeddingBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), argI(4), <f32>argF(5), argI(6));
      break;
    case K_POSITIONAL_FORWARD:
      positionalForwardPart(part, parts, argP(0), argP(1), argI(2), argI(3), argI(4), argI(5));
      break;
    case K_POSITIONAL_BACKWARD:
      positionalBackwardPart(part, parts, argP(0), argP(1), argI(2), argI(3), argI(4), argI(5));
      break;
    case K_LAYERNORM_FORWARD:
      layernormForwardPart(
        part,
        parts,
        argP(0),
        argP(1),
        argP(2),
        argP(3),
        argP(4),
        argP(5),
        argI(6),
        argI(7),
        argF(8),
      );
      break;
    case K_LAYERNORM_BACKWARD_DX:
      layernormBackwardDxPart(part, parts, argP(0), argP(3), argP(4), argP(5), argP(6), argP(7), argI(8), argI(9));
      break;
    case K_LAYERNORM_BACKWARD_DW:
      layernormBackwardDwPart(part, parts, argP(1), argP(2), argP(3), argP(4), argP(5), argP(6), argI(8), argI(9));
      break;
    case K_RELU_FORWARD:
      reluForwardPart(part, parts, argP(0), argP(1), argI(2));
      break;
    case K_RELU_BACKWARD:
      reluBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_GELU_FORWARD:
      geluForwardPart(part, parts, argP(0), argP(1), argI(2));
      break;
    case K_GELU_BACKWARD:
      geluBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_GELU_TANH_FORWARD:
      geluTanhForwardPart(part, parts, argP(0), argP(1), argI(2));
      break;
    case K_GELU_TANH_BACKWARD:
      geluTanhBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_DROPOUT_FORWARD:
      dropoutForwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), <f32>argF(4));
      break;
    case K_DROPOUT_BACKWARD:
      dropoutBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), <f32>argF(4));
      break;
    case K_DROPOUT_MASK:
      // threshold and key words are u32 (< 2^32) in f64 slots: argP's unsigned conversion.
      dropoutMaskPart(part, parts, argP(0), argI(1), <u32>argP(2), <u32>argP(3), <u32>argP(4));
      break;
    case K_SOFTMAX_FORWARD:
      softmaxForwardPart(part, parts, argP(0), argP(1), argI(2), argI(3), argP(4), argI(5), argI(6), argI(7));
      break;
    case K_SOFTMAX_BACKWARD:
      softmaxBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), argI(4));
      break;
    case K_ATTENTION_FORWARD:
      attentionForwardPart(part, parts);
      break;
    case K_ATTENTION_BACKWARD:
      attentionBackwardPart(part, parts);
      break;
    case K_CROSS_ENTROPY_FORWARD:
      crossEntropyForwardPart(part, parts, argP(0), argP(1), argP(2), argI(3), argI(4), argI(5), <f32>argF(6), argP(7));
      break;
    case K_CROSS_ENTROPY_BACKWARD:
      crossEntropyBackwardPart(
        part,
        parts,
        argP(0),
        argP(1),
        argP(2),
        argP(3),
        argI(4),
        argI(5),
        argI(6),
        <f32>argF(7),
        <f32>argF(8),
      );
      break;
    case K_ADAM:
      adamPart(part, parts);
      break;
    case K_RMSNORM_FORWARD:
      rmsnormForwardPart(part, parts, argP(0), argP(1), argP(2), argP(3), argI(4), argI(5), argF(6));
      break;
    case K_RMSNORM_BACKWARD_DX:
      rmsnormBackwardDxPart(part, parts, argP(0), argP(2), argP(3), argP(4), argP(5), argI(6), argI(7));
      break;
    case K_RMSNORM_BACKWARD_DW:
      rmsnormBackwardDwPart(part, parts, argP(1), argP(2), argP(3), argP(4), argI(6), argI(7));
      break;
    case K_ROPE:
      ropePart(
        part,
        parts,
        argP(0),
        argP(1),
        argP(2),
        argI(3),
        argI(4),
        argI(5),
        argI(6),
        argI(7),
        argI(8),
        argI(9),
        argI(10),
        argI(11) != 0,
      );
      break;
    case K_SILU_FORWARD:
      siluForwardPart(part, parts, argP(0), argP(1), argI(2));
      break;
    case K_SILU_BACKWARD:
      siluBackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_RELU2_FORWARD:
      relu2ForwardPart(part, parts, argP(0), argP(1), argI(2));
      break;
    case K_RELU2_BACKWARD:
      relu2BackwardPart(part, parts, argP(0), argP(1), argP(2), argI(3));
      break;
    case K_MUL:
      mulPart(part, parts, argP(0), argP(1), argP(2), argI(3), argI(4) != 0);
      break;
    case K_SOFTCAP_FORWARD:
      softcapForwardPart(part, parts, argP(0), argP(1), argI(2), <f32>argF(3), <f32>argF(4));
      break;
    case K_SOFTCAP_BACKWARD:
      softcapBackwardPart(part, parts, argP(0), argP(1), argI(2), <f32>argF(3), <f32>argF(4));
      break;
    default:
      unreachable();
  }
}

/**
 * Runs `kernel` (arguments already in the control block) in nChunks chunks: on this thread
 * alone when helpers is false, else shared with the helper threads, which claim chunks as
 * they come free. Returns false if a helper thread failed.
 */
export function run(kernel: i32, nChunks: i32, helpers: bool): bool {
  if (!helpers || nChunks <= 1) {
    for (let c = 0; c < nChunks; c++) dispatch(kernel, c, nChunks);
    return true;
  }
  const gen = post(kernel, nChunks);
  while (true) {
    const c = claim(gen);
    if (c < 0) break;
    dispatch(kernel, c, nChunks);
    chunkDone(nChunks);
  }
  return waitDone(nChunks);
}

/**
 * First step of a helper thread: binds this instance to the control block as thread `tid`,
 * counts the helper as ready, and returns the job generation to wait past (for helperLoop).
 */
export function helperAttach(control: usize, tid: i32): i32 {
  setControl(control, tid);
  return helperStart();
}

/** A helper thread's life after helperAttach: run chunks of posted jobs until asked to quit. */
export function helperLoop(seen: i32): void {
  while (true) {
    seen = waitJob(seen);
    if (seen < 0) return;
    while (true) {
      const c = claim(seen);
      if (c < 0) break;
      const n = chunksOf();
      dispatch(jobKernel(), c, n);
      chunkDone(n);
    }
  }
}

/** First byte after the module's static data: the TypeScript allocator starts above it. */
export function heapBase(): usize {
  return __heap_base;
}
