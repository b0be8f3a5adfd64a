import type { ErrorCode } from './ipc';

/** A turn's failure as the operator reads it: what happened, what to do; the core's text kept. */
export interface HumanError {
  title: string;
  hint: string | null;
}

const BY_CODE: Partial<Record<ErrorCode, HumanError>> = {
  'llm.rate_limited': { title: 'The model provider is limiting requests', hint: 'Wait a moment, then retry.' },
  'llm.quota_exceeded': { title: 'The model account is out of quota', hint: 'Check the provider account, then retry.' },
  'llm.unauthorized': { title: 'The model provider refused the credentials', hint: 'Check the API key or sign-in in Settings.' },
  'llm.credentials': { title: 'The model credentials could not be used', hint: 'Check the API key or sign-in in Settings.' },
  'llm.credentials.missing': { title: 'No credentials for the model', hint: 'Add an API key or sign in, in Settings.' },
  'llm.credentials.sign_in_required': { title: 'Sign in again to use the model', hint: 'Use Sign in in the banner or Settings.' },
  'llm.credentials.unavailable': { title: 'The keyring with the model key is unavailable', hint: 'Unlock the keyring, then retry.' },
  'llm.no_api_key': { title: 'No API key for the model', hint: 'Add one in Settings.' },
  'llm.not_configured': { title: 'No model is configured', hint: 'Choose a provider and model in Settings.' },
  'llm.config': { title: 'The model settings are not valid', hint: 'Check them in Settings.' },
  'llm.insecure_endpoint': { title: 'The model endpoint is not secure', hint: 'Use https, or a local address.' },
  'llm.connect': { title: 'Could not reach the model provider', hint: 'Check the network or the endpoint, then retry.' },
  'llm.idle_timeout': { title: 'The model stopped answering', hint: 'Retry; the provider may be overloaded.' },
  'llm.deadline_exceeded': { title: 'The model took too long to answer', hint: 'Retry, or raise the limit in Settings.' },
  'llm.stream_cut': { title: "The model's reply was cut off", hint: 'Retry.' },
  'llm.empty_reply': { title: 'The model sent an empty reply', hint: 'Retry.' },
  'llm.provider_error': { title: 'The model provider had an error', hint: 'Retry in a moment.' },
  'llm.context_length': { title: 'This conversation is too long for the model', hint: 'Start a new session for the next task.' },
  'llm.content_filter': { title: "The provider's content filter blocked the reply", hint: 'Rephrase the request.' },
  'llm.refused': { title: 'The model refused to answer', hint: 'Rephrase the request.' },
  'llm.response_too_large': { title: "The model's reply was too large", hint: 'Retry, or ask for less at once.' },
  'llm.bad_request': { title: 'The model provider rejected the request', hint: 'Check the model name in Settings.' },
  'llm.protocol': { title: 'The model provider answered in an unexpected way', hint: 'Check the endpoint in Settings.' },
  'llm.cancelled': { title: 'The request was stopped', hint: null },
  'agent.stopped': { title: 'Stopped', hint: 'The session is paused: send a message to continue.' },
  'agent.busy': { title: 'Nomos is still working on this session', hint: 'Wait for it, or press Stop.' },
  'agent.turn_elsewhere': {
    title: 'This turn runs in another Nomos process',
    hint: 'Stop it there (Ctrl-C for a nomos ask); this window shows the session when you come back to it.',
  },
  'agent.runaway': { title: 'The turn was stopped to avoid a loop', hint: 'Send a message to continue.' },
  'agent.token_budget': { title: 'This session used its token budget', hint: 'Start a new session or raise the budget in Settings.' },
  'agent.turn_deadline': { title: 'The turn ran past its time limit', hint: 'Send a message to continue, or raise the limit in Settings.' },
  'agent.starting': { title: 'Nomos is still starting', hint: 'Retry in a moment.' },
};

export function humanizeError(code: ErrorCode): HumanError {
  const known = BY_CODE[code];
  if (known) return known;
  const domain = code.split('.')[0];
  if (domain === 'exec') return { title: 'A command could not run', hint: null };
  if (domain === 'store') return { title: 'The local database had a problem', hint: 'Retry; if it persists, check the logs.' };
  if (domain === 'auth') return { title: 'Sign-in problem', hint: 'Check sign-in in Settings.' };
  return { title: 'Something went wrong', hint: null };
}
