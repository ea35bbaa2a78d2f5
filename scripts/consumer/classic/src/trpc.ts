import { createTRPCReact } from '@trpc/react-query';
import type { AppRouter } from './router.js';

export const trpc = createTRPCReact<AppRouter>();
