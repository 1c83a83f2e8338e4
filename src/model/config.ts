// Model configuration: one shape for both architectures the engine runs, read from a
// Hugging Face config.json. GPT-2 style: learned positions, LayerNorm, GELU (tanh), tied
// embeddings. Llama style (Llama, SmolLM2, Qwen2/2.5, Qwen3): RoPE, RMSNorm, SwiGLU,
// grouped-query attention, optional untied head, optional q/k/v bias (Qwen2) and q/k norm (Qwen3).

export type Architecture = 'gpt2' | 'llama';

export interface ModelConfig {
  architecture: Architecture;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  maxPositions: number;
  normEps: number;
  /** Llama style only. */
  ropeTheta: number;
  tieWordEmbeddings: boolean;
  /** Bias on q/k/v projections (GPT-2 has biases everywhere; Qwen2 on q/k/v only). */
  attentionBias: boolean;
  /** Qwen3: RMSNorm over each head of q and k before RoPE. */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenId: number | null;
  /** config.json's "rubric_playground" block (byte tokenizer, prompt template), kept for saving. */
  extras?: Record<string, unknown>;
}

export class ModelConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelConfigError';
  }
}

type Json = Record<string, unknown>;

function int(json: Json, key: string, fallback?: number): number {
  const v = json[key] ?? fallback;
  // Safe integers only: 1e300 is an "integer" to Number.isInteger, and sizes are multiplied later.
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    throw new ModelConfigError(`config.json: "${key}" must be a positive integer, got ${JSON.stringify(json[key])}`);
  }
  return v;
}

function num(json: Json, key: string, fallback: number): number {
  const v = json[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new ModelConfigError(`config.json: "${key}" must be a positive number, got ${JSON.stringify(json[key])}`);
  }
  return v;
}

function tokenId(json: Json, key: string): number | null {
  const v = json[key];
  const first = Array.isArray(v) ? v[0] : v; // several EOS ids: the first is the default
  if (first == null) return null;
  if (typeof first !== 'number' || !Number.isSafeInteger(first) || first < 0) {
    throw new ModelConfigError(`config.json: "${key}" must be a token id (a non-negative integer) or a list of them, got ${JSON.stringify(v)}`);
  }
  return first;
}

const LLAMA_FAMILY = ['llama', 'qwen2', 'qwen3', 'mistral', 'smollm'];
/** Head classes that are causal language models (GPT2LMHeadModel, LlamaForCausalLM, ...). */
const CAUSAL_LM = /(ForCausalLM|LMHeadModel)$/;

/** Parses a Hugging Face config.json; unknown architectures and unsupported fields are named. */
export function configFromHf(json: Json): ModelConfig {
  const modelType = String(json.model_type ?? '');
  const architectures = Array.isArray(json.architectures) ? json.architectures.map(String) : [];
  const named = architectures.length ? ` (architectures: ${architectures.join(', ')})` : '';
  if (modelType === '') {
    throw new ModelConfigError(`config.json has no "model_type"${named}; supported: gpt2, ${LLAMA_FAMILY.join(', ')}`);
  }
  if (modelType !== 'gpt2' && !LLAMA_FAMILY.includes(modelType)) {
    throw new ModelConfigError(`config.json: model_type "${modelType}"${named} is not supported (supported: gpt2, ${LLAMA_FAMILY.join(', ')})`);
  }
  const otherHeads = architectures.filter((a) => !CAUSAL_LM.test(a));
  if (otherHeads.length && otherHeads.length === architectures.length) {
    throw new ModelConfigError(`config.json: architectures ${otherHeads.join(', ')} is not a causal language model (supported: *ForCausalLM, GPT2LMHeadModel)`);
  }
  const problems = [...commonProblems(json), ...(modelType === 'gpt2' ? gpt2Problems(json) : llamaProblems(json))];
  if (problems.length) throw new ModelConfigError(`config.json (model_type "${modelType}"): unsupported settings: ${problems.join('; ')}`);
  const extras = json.rubric_playground;
  const withExtras = (c: ModelConfig): ModelConfig =>
    extras && typeof extras === 'object' && !Array.isArray(extras) ? { ...c, extras: extras as Record<string, unknown> } : c;
  return withExtras(modelType === 'gpt2' ? gpt2Config(json) : llamaConfig(json, modelType));
}

/** Settings the engine does not implement, each named with its value and what is supported. */
function commonProblems(json: Json): string[] {
  const problems: string[] = [];
  if (json.quantization_config != null) {
    const method = (json.quantization_config as { quant_method?: unknown }).quant_method;
    problems.push(`"quantization_config" (${method ? `quant_method "${String(method)}"` : 'quantized weights'}): only unquantized F32/F16/BF16 checkpoints load`);
  }
  for (const key of ['num_experts', 'num_local_experts']) {
    if (typeof json[key] === 'number' && (json[key] as number) > 0) problems.push(`"${key}": ${json[key]} (mixture of experts is not supported)`);
  }
  return problems;
}

function gpt2Problems(json: Json): string[] {
  const problems: string[] = [];
  const activation = json.activation_function ?? 'gelu_new';
  if (activation !== 'gelu_new' && activation !== 'gelu_pytorch_tanh') {
    problems.push(`activation_function "${String(activation)}" is not supported for gpt2 (supported: gelu_new)`);
  }
  for (const flag of ['scale_attn_by_inverse_layer_idx', 'reorder_and_upcast_attn', 'add_cross_attention']) {
    if (json[flag] === true) problems.push(`"${flag}": true is not supported`);
  }
  if (json.scale_attn_weights === false) problems.push('"scale_attn_weights": false is not supported (attention is scaled by 1/sqrt(head size))');
  if (json.tie_word_embeddings === false) problems.push('"tie_word_embeddings": false is not supported for gpt2 (the head is the token embedding)');
  return problems;
}

function llamaProblems(json: Json): string[] {
  const problems: string[] = [];
  const scaling = json.rope_scaling as { rope_type?: unknown; type?: unknown } | null | undefined;
  const ropeType = scaling == null ? 'default' : String(scaling.rope_type ?? scaling.type ?? 'unknown');
  if (ropeType !== 'default') {
    problems.push(`"rope_scaling" ${JSON.stringify(json.rope_scaling)} (type "${ropeType}") is not supported (plain RoPE only)`);
  }
  if (json.hidden_act != null && json.hidden_act !== 'silu') problems.push(`hidden_act "${String(json.hidden_act)}" is not supported (supported: silu)`);
  if (json.mlp_bias === true) problems.push('"mlp_bias": true is not supported');
  if (json.use_sliding_window === true) problems.push('"use_sliding_window": true is not supported (full attention only)');
  // Mistral has no use_sliding_window switch: a window shorter than the context changes attention.
  const window = json.sliding_window;
  const context = typeof json.max_position_embeddings === 'number' ? json.max_position_embeddings : Infinity;
  if (json.model_type === 'mistral' && typeof window === 'number' && window < context) {
    problems.push(`"sliding_window": ${window} is not supported (full attention only; this model attends to ${window} tokens back)`);
  }
  if (json.partial_rotary_factor != null && json.partial_rotary_factor !== 1) {
    problems.push(`"partial_rotary_factor": ${JSON.stringify(json.partial_rotary_factor)} is not supported (RoPE over the whole head)`);
  }
  return problems;
}

function gpt2Config(json: Json): ModelConfig {
  const hiddenSize = int(json, 'n_embd');
  const numHeads = int(json, 'n_head');
  if (hiddenSize % numHeads !== 0) throw new ModelConfigError(`config.json: n_embd ${hiddenSize} is not divisible by n_head ${numHeads}`);
  return {
    architecture: 'gpt2',
    vocabSize: int(json, 'vocab_size'),
    hiddenSize,
    numLayers: int(json, 'n_layer'),
    numHeads,
    numKvHeads: numHeads,
    headDim: hiddenSize / numHeads,
    intermediateSize: json.n_inner == null ? 4 * hiddenSize : int(json, 'n_inner'),
    maxPositions: int(json, 'n_positions', 1024),
    normEps: num(json, 'layer_norm_epsilon', 1e-5),
    ropeTheta: 10000,
    tieWordEmbeddings: true,
    attentionBias: true,
    qkNorm: false,
    bosTokenId: tokenId(json, 'bos_token_id'),
    eosTokenId: tokenId(json, 'eos_token_id'),
  };
}

function llamaConfig(json: Json, modelType: string): ModelConfig {
  const hiddenSize = int(json, 'hidden_size');
  const numHeads = int(json, 'num_attention_heads');
  const numKvHeads = int(json, 'num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new ModelConfigError(`config.json: num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`);
  }
  const headDim = json.head_dim == null ? hiddenSize / numHeads : int(json, 'head_dim');
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new ModelConfigError(`config.json: head dimension ${headDim} must be an even integer for RoPE`);
  }
  return {
    architecture: 'llama',
    vocabSize: int(json, 'vocab_size'),
    hiddenSize,
    numLayers: int(json, 'num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: int(json, 'intermediate_size'),
    maxPositions: int(json, 'max_position_embeddings', 2048),
    normEps: num(json, 'rms_norm_eps', 1e-6),
    ropeTheta: num(json, 'rope_theta', 10000),
    tieWordEmbeddings: json.tie_word_embeddings === true,
    // Qwen2 has q/k/v biases without saying so in config.json.
    attentionBias: json.attention_bias === true || modelType === 'qwen2',
    qkNorm: modelType === 'qwen3',
    bosTokenId: tokenId(json, 'bos_token_id'),
    eosTokenId: tokenId(json, 'eos_token_id'),
  };
}

/** The config.json a Hugging Face loader expects for `config` (used to save checkpoints). */
export function configToHf(c: ModelConfig): Json {
  const json = hfFields(c);
  if (c.extras) json.rubric_playground = c.extras;
  return json;
}

function hfFields(c: ModelConfig): Json {
  if (c.architecture === 'gpt2') {
    return {
      model_type: 'gpt2',
      architectures: ['GPT2LMHeadModel'],
      vocab_size: c.vocabSize,
      n_embd: c.hiddenSize,
      n_layer: c.numLayers,
      n_head: c.numHeads,
      n_inner: c.intermediateSize,
      n_positions: c.maxPositions,
      layer_norm_epsilon: c.normEps,
      activation_function: 'gelu_new',
      bos_token_id: c.bosTokenId,
      eos_token_id: c.eosTokenId,
      tie_word_embeddings: true,
    };
  }
  return {
    model_type: c.qkNorm ? 'qwen3' : 'llama',
    architectures: [c.qkNorm ? 'Qwen3ForCausalLM' : 'LlamaForCausalLM'],
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    intermediate_size: c.intermediateSize,
    max_position_embeddings: c.maxPositions,
    rms_norm_eps: c.normEps,
    rope_theta: c.ropeTheta,
    tie_word_embeddings: c.tieWordEmbeddings,
    attention_bias: c.attentionBias,
    hidden_act: 'silu',
    bos_token_id: c.bosTokenId,
    eos_token_id: c.eosTokenId,
  };
}
