import { describe, expect, it } from 'vitest';
import * as server from './index.js';

describe('@callgate/server public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(server).sort()).toEqual(
      [
        'API_KEY_PATTERN',
        'API_KEY_ROLES',
        'DEFAULT_HEADERS_TIMEOUT_MS',
        'DEFAULT_MCP_PROFILE',
        'DEFAULT_REQUEST_TIMEOUT_MS',
        'DENY_ALL_POLICY_TEXT',
        'HTTP_STATUS_OF_KIND',
        'SERVER_VERSION',
        'UNREAD_BODY_DRAIN_LIMIT',
        'WebhookApprovalPort',
        'WebhookDeliveryRefused',
        'answerClientErrors',
        'apiKeyHash',
        'bodyTooLarge',
        'attachApprovalPort',
        'createApiKey',
        'createApp',
        'createWebhookReceiver',
        'drainBeforeClose',
        'httpStatusOf',
        'methodNotAllowedResponse',
        'prepareSocketPath',
        'readPolicyFile',
        'readServerConfig',
        'revokeApiKey',
        'requestTimeoutOptions',
        'sessionIdHash',
        'startServer',
        'startTelemetry',
        'traceLedger',
        'verifyWebhookSignature',
        'webhookSignature',
      ].sort(),
    );
  });
});
