import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';

// findBy… and waitFor give up after 1 s by default. With the suite's files in parallel workers on a 2-core
// machine, a save that re-renders an open rule form has been seen to take longer than that, so a test failed
// on a busy machine while the code under it was right. A query still fails, only later.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});
