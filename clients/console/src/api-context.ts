/** The signed-in AdminApi, given to every page by the app. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { AdminApi } from './api';

export const ApiContext = createContext<AdminApi | null>(null);

export function useApi(): AdminApi {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in console');
  return api;
}
