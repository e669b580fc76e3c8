import Foundation
import SegmentsDomain
import SegmentsEmulator
import SegmentsNetworking
import SegmentsTesting
import Testing

extension LiveIntegrationTests {
    /// Emulators and transports created and dropped one after another, as a test run does.
    @Suite(Hang.timeLimit(minutes: 2)) struct LiveLifecycleTests {
        /// Regression: a stopped emulator's server ran `stop()` again from `deinit` and wrote its
        /// wake-up byte to its closed pipe descriptor, which the next emulator's wake pipe had often
        /// taken; that emulator's accept loop then quit and every request to it hung.
        @Test func emulatorsStartedOneAfterAnotherEachAnswer() async throws {
            var failures: [String] = []
            for round in 0..<40 {
                let live = try LiveHarness(.project, requestTimeout: LiveHarness.generousTimeout)
                let error = await segmentsError { _ = try await live.repository.fetchSegments(for: anonymous) }
                if let error {
                    failures.append("round \(round): \(error), \(live.emulator.requests.count) request(s) logged")
                }
                live.stop()
            }
            #expect(failures.isEmpty, "\(failures)")
        }

        @Test func anEmulatorCanBeStoppedTwiceAndRestarted() async throws {
            let live = try LiveHarness(.project)
            live.emulator.stop()
            live.emulator.stop()
            #expect(!live.emulator.isRunning)

            let restarted = try live.emulator.start()
            defer { live.stop() }
            let configuration = BloomreachConfiguration(
                integration: LiveMode.project.integration, baseURL: restarted.absoluteString, requestTimeout: LiveHarness.generousTimeout)
            let repository = BloomreachSegmentRepository(
                configuration: configuration, transport: live.transport, scheduler: live.scheduler,
                clock: FixedClock(date: Harness.now), logger: live.logger)

            #expect(try await repository.fetchSegments(for: anonymous) == [:])
            #expect(live.emulator.requests.count == 1)
        }
    }
}
