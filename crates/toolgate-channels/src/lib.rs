//! Where approvals reach people (seed 001): channel adapters over real HTTP
//! APIs, verified callbacks, signed links, and fan-out with retries.
