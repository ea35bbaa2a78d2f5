/** Which keys someone currently wants (relay heartbeats, tokens minted by the auth backend). */
export interface DemandSource {
  demanded(): Promise<ReadonlySet<string>>;
}
