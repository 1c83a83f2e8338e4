import { describe, expect, it } from 'vitest';
import { stepTimeText } from '../../../src/ui/lib/stepTimeText';

describe('stepTimeText', () => {
  it('asks for a first step when there is none', () => {
    expect(stepTimeText(0, undefined)).toBe('No steps yet: press Train.');
  });
  it('splits the newest step into sampling, judging and the update', () => {
    expect(stepTimeText(3, { step_seconds: 12.34, judge_seconds: 0.21, sampling_seconds: 8.06, update_seconds: 4.02 })).toBe(
      '3 steps; last step 12.3 s (sampling 8.1 s, judging 0.2 s, update 4.0 s)',
    );
  });
  it('gives the total alone for a step saved before the split was recorded', () => {
    expect(stepTimeText(1, { step_seconds: 2, judge_seconds: 0.5 })).toBe('1 step; last step 2.0 s');
  });
});
