export * from './types';
export { ApiClient, ApiError } from './client';
export { ApiProvider, useApi } from './context';
