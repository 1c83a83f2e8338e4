// The one error a bad rubric raises: every problem found, each naming where it is.

export interface RubricIssue {
  /** Where the problem is, written as in the JSON: `criteria[2].rule.pattern`; `rubric` for the root. */
  path: string;
  message: string;
}

/** Formats a path the way a person reads JSON: keys joined by dots, indices in brackets. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? 'rubric' : out;
}

export class RubricError extends Error {
  readonly issues: readonly RubricIssue[];

  constructor(issues: readonly RubricIssue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
    this.name = 'RubricError';
    this.issues = issues;
  }
}
