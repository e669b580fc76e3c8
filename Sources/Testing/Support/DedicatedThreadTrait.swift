#if canImport(Testing)
    import Testing

    /// A trait that runs each test case on a thread of its own instead of Swift concurrency's
    /// cooperative pool.
    ///
    /// For tests that block — a synchronous socket read, `usleep`, `DispatchQueue.sync`, a long
    /// loop without a suspension. Swift Testing runs every test on the cooperative pool, which has
    /// as many threads as the machine has cores (two on a small CI machine, shared on Linux with
    /// `DispatchQueue.global()`): two blocking tests at once leave the SDK's tasks in every other
    /// test waiting until they end, and those tests' own waits time out. Under this trait each
    /// test case runs on a ``DedicatedThreadExecutor``, and so do its child tasks (`async let`, task
    /// groups; an unstructured `Task {}` runs on the pool); its expectations are recorded as usual.
    ///
    /// It is for tests that *wait*. Every case gets a thread, so the cases of a test that keeps the
    /// processor busy would all run at once and take time from everything else: leave those on the
    /// pool, which runs as many at once as there are cores.
    ///
    /// Task executors need macOS 15, iOS 18, tvOS 18 or watchOS 11: before those, the trait does
    /// nothing.
    ///
    /// ```swift
    /// @Suite(Hang.timeLimit(minutes: 2), .onDedicatedThread) struct SocketTests { … }
    /// @Test(.onDedicatedThread) func aLongCampaign() async { … }
    /// ```
    public struct DedicatedThreadTrait: SuiteTrait, TestTrait, TestScoping {
        /// Applies to every test of a suite, and of the suites inside it.
        public var isRecursive: Bool { true }

        /// Scopes each test case, not the suite or the function around them, so the cases of one
        /// suite still run in parallel.
        public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
            testCase == nil ? nil : self
        }

        /// Runs `function` with a new ``DedicatedThreadExecutor`` as its task executor.
        public func provideScope(
            for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
        ) async throws {
            guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) else { return try await function() }
            try await withTaskExecutorPreference(DedicatedThreadExecutor()) { try await function() }
        }
    }

    extension Trait where Self == DedicatedThreadTrait {
        /// Each test case on a thread of its own (see ``DedicatedThreadTrait``).
        public static var onDedicatedThread: Self { DedicatedThreadTrait() }
    }
#endif
