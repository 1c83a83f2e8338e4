// scripts/kernel.mjs as a user runs it: JSON on stdin, JSON on stdout, one-line errors.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/browser.mjs';

function runKernel(name: string, stdin: string) {
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'kernel.mjs'), name], {
    input: stdin,
    encoding: 'utf8',
    timeout: 90_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('node scripts/kernel.mjs', () => {
  it('runs the log-prob kernel and prints JSON (-inf as null)', () => {
    const r = runKernel('logprobs', JSON.stringify({ logits: [[0, Math.log(3)], [0, '-inf']], tokens: [1, 1], grad_logprobs: [1, 0] }));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.logprobs[0]).toBeCloseTo(Math.log(0.75), 6);
    expect(out.logprobs[1]).toBeNull();
    expect(out.grad_logits[0][0]).toBeCloseTo(-0.25, 6);
    expect(out.grad_logits[0][1]).toBeCloseTo(0.25, 6);
  });

  it('rejects invalid input with one line naming the field and exit status 2', () => {
    const r = runKernel('logprobs', JSON.stringify({ logits: [[0, 1]], tokens: [0.5] }));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/tokens\[0\]: expected an integer/);
  });

  it('rejects malformed JSON and unknown kernels before starting a browser', () => {
    expect(runKernel('logprobs', '{"logits": [').stderr).toMatch(/stdin is not valid JSON/);
    const unknown = runKernel('softmax', '{}');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown kernel "softmax" \(known: logprobs, group_advantage, policy_loss, distill\)/);
  });

  it('runs the distillation kernel: forward KL, a masked token, an infinite loss as null', () => {
    const request = {
      student_logits: [[0, Math.log(3)], ['-inf', 0], [null, 0]],
      teacher_logits: [[Math.log(3), 0], [0, 0], [0, 0]],
      beta: 0,
      mask: [1, 0, 1],
      grad_loss: [1, 1, 1],
    };
    const r = runKernel('distill', JSON.stringify(request));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    // KL([3/4, 1/4] || [1/4, 3/4]) = (3/4 - 1/4) ln 3.
    expect(out.loss[0]).toBeCloseTo(0.5 * Math.log(3), 5);
    // d/dz KL(q || p) = p - q.
    expect(out.grad_student_logits[0][0]).toBeCloseTo(-0.5, 5);
    expect(out.grad_student_logits[0][1]).toBeCloseTo(0.5, 5);
    // Masked: loss 0, no gradient, even though its divergence is infinite.
    expect(out.loss[1]).toBe(0);
    expect(out.grad_student_logits[1]).toEqual([0, 0]);
    // Unmasked, the teacher has mass where the student is -inf: +inf, printed as null, and so is the mean.
    expect(out.loss[2]).toBeNull();
    expect(out.mean_loss).toBeNull();
  });
});
