import SegmentsTesting
import Testing

/// The integration suites: the real `URLSessionSegmentsTransport` and Bloomreach adapters against a
/// `SegmentsEmulator` over loopback HTTP, one emulator per test. The suites are nested here in
/// extensions (`LiveEndpointTests`, `LiveAuthorizationTests`, `LiveFaultTests`,
/// `LiveConcurrencyTests`, `LiveEncodingTests`, `LiveLifecycleTests`).
///
/// They run one test at a time: each test then gets the descriptor numbers the previous one just
/// closed, so a component that touches a descriptor after closing it hits the next test's sockets
/// and shows up at once (this is how a stray wake-up byte from a stopped emulator's `deinit` was
/// found), and timing assertions do not compete with a hundred other tests for two cores. The set
/// still takes only a few seconds.
@Suite(.serialized, Hang.timeLimit(minutes: 5)) struct LiveIntegrationTests {}
