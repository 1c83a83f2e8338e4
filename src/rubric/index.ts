// The rubric layer: schema, rule checks, judges, reward aggregation. Pure TypeScript — no GPU,
// no DOM — so it runs in Node tests, the page and Web Workers alike.
export { RubricError, type RubricIssue } from './errors';
export {
  parseRubric,
  isRuleCriterion,
  TIERS,
  DEFAULT_CHOICES,
  type Rubric,
  type Criterion,
  type RuleCriterion,
  type QuestionCriterion,
  type Rule,
  type RuleKind,
  type Tier,
  type JsonShape,
} from './schema';
export { rubricVersion, canonicalJson } from './version';
export { checkRule, type RuleOutcome, type RuleContext } from './rules';
export { approximateTokens, type TokenCounter } from './text';
export {
  judgeWithRules,
  judgeRollouts,
  ruleJudge,
  cachedJudge,
  choiceScore,
  type Judge,
  type JudgeRequest,
  type CriterionResult,
  type ResultStatus,
  type Rollout,
} from './judge';
export { findQuote, quoteInAnswer, normaliseSpans, ruleSpans, MAX_SPANS, type Span } from './evidence';
export { JudgeCache, type JudgeCacheKey } from './cache';
export {
  scoresOf,
  weightedMean,
  healthbenchPoints,
  essentialGated,
  strictAllRequired,
  DEFAULT_PASS_THRESHOLD,
  type Scores,
} from './aggregate';
export { dropoutMask, rubricDropout, type DropoutOptions } from './dropout';
export { adaptiveWeights, type AdaptiveResult } from './adaptive';
export { correlationWeights, type CorrelationWeightsResult } from './correlationWeights';
export { forkReward, forkParts, forkRubricIssue, DEFAULT_FORK_BETA, type ForkParts } from './fork';
export {
  draftRubric,
  contrastiveRubric,
  decomposeCriterion,
  draftMessages,
  contrastiveMessages,
  decomposeMessages,
  GenerationError,
  type Complete,
  type GenerationMessages,
} from './generate';
export { mergeRubrics, sampleRubrics, type MergeResult, type SampleResult } from './generateMerge';
export { judgeAgreement, rewardAuroc, pairwiseAccuracy, pairsFromMarks, type VerdictLabel, type PreferencePair, type CriterionAgreement, type RankingResult } from './labels';
export {
  aggregateGroup,
  aggregateAll,
  AGGREGATIONS,
  DEFAULT_DROPOUT_P,
  type AggregationConfig,
  type AggregationName,
  type GroupContext,
  type GroupRewards,
} from './aggregations';
export { kernelRewardInputs, type KernelRewardInputs } from './kernelInputs';
export {
  remoteJudge,
  RemoteJudge,
  describeRemoteJudge,
  matchChoice,
} from './judges/remote';
export { judgeMessages, judgePromptText, compactJudgePromptText } from './judges/modelJudgePrompt';
export { lintRubric, compoundParts, similarity, invertedRule, LINT_CODES, type LintFinding, type LintFix, type LintCode } from './lint';
export { checkLeakage, type LeakageOptions, type LeakageRow } from './leakage';
export { measureRubric, pearson, correlationAwareWeights, criterionCorrelation, REDUNDANT_CORRELATION, type RubricMeasure, type CriterionMeasure, type CriterionFlag, type MeasuredRollout } from './measure';
export { fitIrt, irtVerdicts, irtAbility, itemInformation, informativeCriteria, type IrtFit, type IrtItem, type Verdict } from './irt';
export { newIrtState, irtOnlineUpdate, irtExpectedCounts, irtEap, irtRewardOf, normalCdf, irtRubricUpdate, irtRubricRewards, irtStateItems, type IrtOnlineState } from './irtOnline';
export { judgeAdaptively, judgedCriteria, nextCriterion, type AdaptiveJudging } from './irtSelect';
export { probeSetSchema, type ProbeSet, type StoredProbe } from './probeSet';
export type { InductionProvenance } from './induce';
