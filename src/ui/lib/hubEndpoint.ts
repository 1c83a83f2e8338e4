// The optional Hub mirror named in the page address (?hub_endpoint=/test/fixtures/hub, or an
// http(s) URL): where "hf:" models download from instead of huggingface.co. A bad value is
// refused with the endpoint parser's message, and the page falls back to the Hub itself.
import { normalizeEndpoint } from '../../model/hub/hubId';

export const HUB_ENDPOINT_PARAM = 'hub_endpoint';

export interface HubEndpointChoice {
  /** The mirror to use, or null for huggingface.co. */
  endpoint: string | null;
  /** Why the address's value was refused. */
  error: string | null;
}

export function readHubEndpoint(search: string): HubEndpointChoice {
  const value = new URLSearchParams(search).get(HUB_ENDPOINT_PARAM);
  if (value === null || value.trim() === '') return { endpoint: null, error: null };
  try {
    return { endpoint: normalizeEndpoint(value.trim()), error: null };
  } catch (e) {
    return { endpoint: null, error: `The address's ${HUB_ENDPOINT_PARAM} was ignored: ${(e as Error).message}. Models download from huggingface.co.` };
  }
}
