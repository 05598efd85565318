// Test support for steps run through `executeStep`: a tool executor that records what it ran, and
// approval ports that answer at once as a reviewer would.
import { CallbackApprovalPort, type ExecutableCall } from '@callgate/core';

/** A tool executor that records every call it runs; `result` gives each call's result. */
export function recordingExecutor(
  result: (call: ExecutableCall) => unknown = (call) => ({ ran: call.tool }),
) {
  const ran: ExecutableCall[] = [];
  const execute = async (call: ExecutableCall) => {
    ran.push(call);
    return result(call);
  };
  return { ran, execute };
}

/** An approval port whose reviewer `alice` approves every call ("fine"). */
export const approvingReviewer = new CallbackApprovalPort(() => ({
  approved: true,
  reviewer: 'alice',
  reason: 'fine',
}));

/** An approval port whose reviewer `bob` denies every call ("too much"). */
export const denyingReviewer = new CallbackApprovalPort(() => ({
  approved: false,
  reviewer: 'bob',
  reason: 'too much',
}));
