// @callgate/openai-agents: the public API. Anything exported here is public; add names deliberately.
export {};
