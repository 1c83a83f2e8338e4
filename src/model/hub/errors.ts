// Errors of loading a model from the Hub or from picked files, each naming the file and what to do.

/** A file the model needs (or one that was probed for) is not there. */
export class MissingFileError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file} is missing: ${reason}`);
    this.name = 'MissingFileError';
  }
}

/** The user (or the caller's AbortSignal) cancelled the download. */
export class DownloadCancelledError extends Error {
  constructor(readonly file: string | null = null) {
    super(file ? `download cancelled (while fetching ${file})` : 'download cancelled');
    this.name = 'DownloadCancelledError';
  }
}

/** The server answered with an HTTP error other than "not found". */
export class HubHttpError extends Error {
  constructor(
    readonly file: string,
    readonly status: number,
    url: string,
  ) {
    super(`${file}: HTTP ${status} from ${url}${hint(status)}`);
    this.name = 'HubHttpError';
  }
}

function hint(status: number): string {
  if (status === 401 || status === 403) {
    return ': a gated or private model (the Hub also answers 401 for a model that does not exist); this app does not send access tokens, so it loads public models only';
  }
  if (status === 429) return ': too many requests; wait a minute and try again';
  if (status >= 500) return ': the server failed; try again later';
  return '';
}

/** 1536 → "1.5 KiB" (the store has the same helper; the model layer may not import it). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)} bytes` : `${v.toFixed(1)} ${units[u]}`;
}
