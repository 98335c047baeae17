/** A valid deployment body (vLLM serving Llama 3.2 3B) for tests that create endpoints. */
export const TEST_DEPLOYMENT = {
  imageRef: "registry.example.com/vllm-openai:v0.11.0",
  imageBytes: 7_700_000_000,
  modelSource: "hf://meta-llama/Llama-3.2-3B-Instruct",
  modelBytes: 6_430_000_000,
  modelFormat: "safetensors",
  engine: "vllm",
} as const;
