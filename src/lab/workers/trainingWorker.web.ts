/**
 * The training worker's entry in a browser (bundled as the classic script
 * dist/web/trainingWorker.js, started from a `blob:` URL by the web extension host): files
 * through the extension host, WebAssembly helper threads where the page is cross-origin
 * isolated. It says how many threads it trains on, and why only one.
 *
 * Leaves out: the commands themselves (trainingService.ts) and Node's entry (trainingWorker.node.ts).
 */

import type { FromTrainingWorker } from '../../protocol/trainingWorker';
import { serveTraining } from './trainingService';
import { oneThreadReason, webWorkerPlatform } from '../platform/platform.web';

const { platform, channel } = webWorkerPlatform<FromTrainingWorker>();
serveTraining(platform, channel, oneThreadReason());
