/**
 * The largest `data` value, in UTF-8 bytes, that `publish` (`@streamgate/server`) writes: 512 KiB.
 * A relay with default settings relays every such entry whole (its `RELAY_MAX_ENTRY_BYTES`
 * defaults to the same); a larger one, which only a foreign producer can write, reaches
 * subscribers as `malformed` (docs/protocol.md §11, "Entry size").
 */
export const MAX_ENTRY_DATA_BYTES = 512 * 1024;
