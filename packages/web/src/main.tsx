import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api.js';
import { App } from './App.js';
import './console.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 4xx answer will not change by asking again at once; a dropped connection may.
      retry: (failures, error) => !(error instanceof ApiError && error.status < 500) && failures < 3,
      refetchOnWindowFocus: true,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
