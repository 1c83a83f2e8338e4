// The link worker's protocol (./linkDecode.worker.ts ↔ ./linkDecoder.ts): one request, one reply.
// Apart from the decoder so the worker's module does not import the code that starts it.
import { decodeShareLink, ShareLinkError, type Shared, type ShareLinkErrorCode } from './link';

export interface LinkDecodeRequest {
  id: number;
  fragment: string;
}

export type LinkDecodeReply =
  | { id: number; ok: true; shared: Shared }
  /** code null: not a ShareLinkError (a bug, said as "could not be opened"). */
  | { id: number; ok: false; code: ShareLinkErrorCode | null; message: string };

/** The worker's answer to one request: the experiment, or the refusal's code and words. */
export function linkDecodeReply({ id, fragment }: LinkDecodeRequest): LinkDecodeReply {
  try {
    return { id, ok: true, shared: decodeShareLink(fragment) };
  } catch (e) {
    return e instanceof ShareLinkError ? { id, ok: false, code: e.code, message: e.message } : { id, ok: false, code: null, message: (e as Error)?.message ?? String(e) };
  }
}
