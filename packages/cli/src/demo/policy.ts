/** The demo's policy: reads allowed, writes ask a person, deletes ask inside the sandbox and are denied outside it. */
export const DEMO_POLICY = `# callgate demo policy
version: 1
default: deny
fail_mode: closed
approval: { ttl: 60s, wait: 2m, allow_edits: false }
limits:
  run: { max_calls: 50 }
  tools: { write_file: { max_calls: 5 } }
rules:
  - id: reads
    match: { tools: ["read_*", "list_*"] }
    effect: allow
    reason: reading the sandbox is always allowed
  - id: writes-need-a-person
    match: { tools: [write_file] }
    effect: ask
    reason: every write is shown to a person first
  - id: deletes-outside-sandbox
    match: { tools: [delete_file] }
    when: args.path.startsWith("/") || args.path.contains("..")
    effect: deny
    reason: nothing outside the sandbox is ever deleted
  - id: deletes-need-a-person
    match: { tools: [delete_file] }
    effect: ask
    reason: deleting a file needs a person
`;

/**
 * A stricter policy the demo replays over its own run: listing the sandbox now needs a person,
 * and no destructive tool runs at all. Replaying it shows which past calls it would have changed.
 */
export const DEMO_STRICTER_POLICY = `# callgate demo policy, stricter
version: 1
default: deny
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: listing-needs-a-person
    match: { tools: ["list_*"] }
    effect: ask
  - id: no-destructive-tools
    match: { annotations: { destructiveHint: true } }
    effect: deny
    reason: destructive tools are off
`;

/** What replaying {@link DEMO_STRICTER_POLICY} over the demo's run must find, per change. */
export const DEMO_REPLAY_COUNTS = {
  same: 4,
  stricter: 3,
  'more-permissive': 0,
  'not-replayable': 0,
  'refused-by-gate': 1,
} as const;
