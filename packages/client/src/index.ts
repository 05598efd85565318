// @callgate/client: the public API. Anything exported here is public; add names deliberately.
export {};
