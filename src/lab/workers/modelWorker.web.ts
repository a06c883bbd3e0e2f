/**
 * The model worker's entry in a browser (bundled as the classic script
 * dist/web/modelWorker.js, started from a `blob:` URL by the web extension host): files
 * through the extension host, WebAssembly helper threads where the page is cross-origin
 * isolated.
 *
 * Leaves out: the requests themselves (modelService.ts) and Node's entry (modelWorker.node.ts).
 */

import type { FromModelWorker } from '../../protocol/modelWorker';
import { serveModelRequests } from './modelService';
import { webWorkerPlatform } from '../platform/platform.web';

const { platform, channel } = webWorkerPlatform<FromModelWorker>();
serveModelRequests(platform, channel);
