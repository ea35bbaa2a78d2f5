export { ksUniform } from '@streamgate/testkit';
export type { KsResult } from '@streamgate/testkit';
