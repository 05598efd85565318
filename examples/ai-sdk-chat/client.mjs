// The browser side of the example chat app: useChat (@ai-sdk/react) with the SDK's own tool
// approval UI. A call callgate asks about shows Approve / Deny; the answer goes back with the
// next request as the SDK's `tool-approval-response`, which the route handler forwards to callgate.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';

function ToolPart({ part, answer }) {
  const tool = part.type.slice('tool-'.length);
  if (part.state === 'approval-requested') {
    return h(
      'div',
      { className: 'approval', 'data-tool': tool },
      h('p', null, `${tool} ${JSON.stringify(part.input)} needs your approval`),
      h(
        'button',
        { type: 'button', onClick: () => answer({ id: part.approval.id, approved: true }) },
        'Approve',
      ),
      h(
        'button',
        {
          type: 'button',
          onClick: () => answer({ id: part.approval.id, approved: false, reason: 'declined in the app' }),
        },
        'Deny',
      ),
    );
  }
  if (part.state === 'output-available')
    return h('p', { className: 'tool-output' }, JSON.stringify(part.output));
  if (part.state === 'output-denied') return h('p', { className: 'tool-denied' }, `${tool} was not run`);
  return h('p', { className: 'tool-state' }, `${tool}: ${part.state}`);
}

function App() {
  const { messages, sendMessage, addToolApprovalResponse, status } = useChat({
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState('');
  return h(
    'main',
    { 'data-status': status },
    h(
      'ul',
      { id: 'messages' },
      messages.map((message) =>
        h(
          'li',
          { key: message.id, 'data-role': message.role },
          message.parts.map((part, index) => {
            if (part.type === 'text') return h('p', { key: index }, part.text);
            if (part.type.startsWith('tool-'))
              return h(ToolPart, { key: index, part, answer: addToolApprovalResponse });
            return null;
          }),
        ),
      ),
    ),
    h(
      'form',
      {
        onSubmit: (event) => {
          event.preventDefault();
          if (text.trim() === '') return;
          void sendMessage({ text }); // a failed send shows in useChat's error state
          setText('');
        },
      },
      h('input', { value: text, 'aria-label': 'Message', onChange: (event) => setText(event.target.value) }),
      h('button', { type: 'submit' }, 'Send'),
    ),
  );
}

createRoot(document.getElementById('root')).render(h(App));
