// Guided model set-up: what a failed "Test connection" means, in one line, per error code.
import type { ErrorCode } from './ipc';

/** The headline for a failed connection test; the message below it has the details. */
export function connectionFailureHint(code: ErrorCode): string {
  switch (code) {
    case 'llm.dns':
      return 'The host name does not resolve.';
    case 'llm.connect_refused':
      return 'Nothing listens at that address and port.';
    case 'llm.connect_timeout':
      return 'The host does not answer on that port.';
    case 'llm.connect':
      return 'The connection failed.';
    case 'llm.tls':
      return 'The secure (TLS) connection failed.';
    case 'llm.unauthorized':
      return 'The provider refused the API key or sign-in.';
    case 'llm.no_api_key':
      return 'No API key is stored for this endpoint.';
    case 'llm.model_not_found':
      return 'The provider does not serve this model.';
    case 'llm.endpoint_not_found':
      return 'Nothing answers at this base URL.';
    case 'llm.idle_timeout':
    case 'llm.deadline_exceeded':
      return 'The provider accepted the request but did not answer in time.';
    case 'llm.insecure_endpoint':
      return 'A key would be sent unencrypted.';
    case 'llm.not_configured':
    case 'llm.config':
      return 'The model is not fully configured.';
    case 'llm.rate_limited':
    case 'llm.quota_exceeded':
      return 'The provider is reachable but refuses more requests now.';
    default:
      return 'The model could not be reached.';
  }
}
