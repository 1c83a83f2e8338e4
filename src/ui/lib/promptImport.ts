// Prompts in and out of the editor: one prompt per line in the text box (a line feed inside a
// prompt is written \n, a carriage return \r, a backslash \\), and imports from JSONL or CSV files
// with a "prompt" column. Pure functions; every error names the line or column at fault.
// The editor keeps prompts exactly: a line is its prompt character for character (spaces at
// either end, a byte-order mark, a line of only spaces included), so an experiment opened from a
// link and shared again carries the same prompts. Only empty lines are skipped (a prompt cannot
// be empty). Carriage returns are escaped because a text box turns them into line feeds.

export class PromptImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PromptImportError';
  }
}

export type PromptFormat = 'jsonl' | 'csv' | 'text';

export interface PromptImport {
  format: PromptFormat;
  prompts: string[];
  /** Rows without a usable prompt (empty cell, blank line). */
  skipped: number;
}

/** One prompt as one editor line: "\" → "\\", line feed → "\n", carriage return → "\r". */
export function encodePromptLine(prompt: string): string {
  return prompt.replace(/[\\\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\r'));
}

/** The inverse of encodePromptLine; a backslash before anything else stays as typed. */
export function decodePromptLine(line: string): string {
  return line.replace(/\\([\\nr])/g, (_, c: string) => (c === 'n' ? '\n' : c === 'r' ? '\r' : '\\'));
}

export function promptsToText(prompts: readonly string[]): string {
  return prompts.map(encodePromptLine).join('\n');
}

/** Editor text → prompts: one per non-empty line, exactly as written (see the header). */
export function textToPrompts(text: string): string[] {
  return text
    .split(/\r\n|\r|\n/)
    .filter((line) => line !== '')
    .map(decodePromptLine);
}

/** 1-based numbers of the prompts that are only whitespace (kept, but probably not meant). */
export function blankPromptNumbers(prompts: readonly string[]): number[] {
  return prompts.flatMap((p, i) => (p.trim() === '' ? [i + 1] : []));
}

/** A JSONL row's prompt: a string, {"prompt": string}, or {"prompt": [chat messages]} (last user turn). */
function promptOf(value: unknown, line: number): string | null {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PromptImportError(`line ${line}: expected an object with a "prompt" field or a string`);
  }
  if (!('prompt' in value)) throw new PromptImportError(`line ${line}: no "prompt" field (fields: ${Object.keys(value).join(', ') || 'none'})`);
  const prompt = (value as { prompt: unknown }).prompt;
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt)) {
    const users = prompt.filter((m): m is { role: 'user'; content: string } => !!m && typeof m === 'object' && m.role === 'user' && typeof m.content === 'string');
    if (users.length === 0) throw new PromptImportError(`line ${line}: "prompt" is a message list without a user message with text content`);
    return users[users.length - 1].content;
  }
  if (prompt === null) return null;
  throw new PromptImportError(`line ${line}: "prompt" must be a string or a list of chat messages, got ${typeof prompt}`);
}

export function parseJsonl(text: string): PromptImport {
  const prompts: string[] = [];
  let skipped = 0;
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new PromptImportError(`line ${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    const prompt = promptOf(value, i + 1);
    if (prompt === null || prompt.trim() === '') skipped++;
    else prompts.push(prompt);
  });
  return { format: 'jsonl', prompts, skipped };
}

/** RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks. */
export function parseCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  while (i < src.length) {
    const c = src[i];
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      if (c === '\r' && src[i + 1] === '\n') i++;
    } else field += c;
    i++;
  }
  if (quoted) throw new PromptImportError('a quoted field is not closed (a " is missing)');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

export function parseCsv(text: string): PromptImport {
  const rows = parseCsvRows(text);
  if (rows.length === 0) throw new PromptImportError('the file is empty');
  const header = rows[0].map((h) => h.trim().toLowerCase());
  const column = header.indexOf('prompt');
  if (column < 0) throw new PromptImportError(`no "prompt" column in the header (columns: ${rows[0].join(', ')})`);
  const prompts: string[] = [];
  let skipped = 0;
  for (const row of rows.slice(1)) {
    const cell = row[column] ?? '';
    if (cell.trim() === '') skipped++;
    else prompts.push(cell);
  }
  return { format: 'csv', prompts, skipped };
}

/** Picks the parser from the file name (.jsonl/.json, .csv, else one prompt per line). */
export function parsePromptFile(name: string, text: string): PromptImport {
  const lower = name.toLowerCase();
  const result = lower.endsWith('.jsonl') || lower.endsWith('.ndjson') || lower.endsWith('.json')
    ? parseJsonl(text)
    : lower.endsWith('.csv')
      ? parseCsv(text)
      : { format: 'text' as const, prompts: text.split(/\r?\n/).filter((l) => l.trim() !== ''), skipped: 0 };
  if (result.prompts.length === 0) throw new PromptImportError(`no prompts found in ${name}`);
  return result;
}
