// Saves data as a file through the browser's download (a temporary object URL on an <a download>).
export function download(name: string, data: string | Uint8Array, type: string): void {
  const part: BlobPart = typeof data === 'string' ? data : new Uint8Array(data);
  const url = URL.createObjectURL(new Blob([part], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  // Revoke after the click has been handled (a synchronous revoke can cancel the download).
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
