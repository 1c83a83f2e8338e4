// Reads share links off the page's main thread: a link of megabytes (10,000 prompts) takes
// seconds to inflate, parse and validate on a busy machine, and the page must stay responsive
// meanwhile. One request in, one reply out: the validated experiment, or the ShareLinkError's
// code and message (the words the page shows). See ./linkDecoder.ts and ./linkReply.ts.
import { linkDecodeReply, type LinkDecodeReply, type LinkDecodeRequest } from './linkReply';

// The dedicated-worker scope (the project's types are the page's, where postMessage needs an origin).
const scope = self as unknown as { onmessage: ((event: MessageEvent<LinkDecodeRequest>) => void) | null; postMessage(message: LinkDecodeReply | { ready: true }): void };

scope.onmessage = (event) => scope.postMessage(linkDecodeReply(event.data));
// Started: from now on a failure is this link's, not a browser that cannot run module workers.
scope.postMessage({ ready: true });
