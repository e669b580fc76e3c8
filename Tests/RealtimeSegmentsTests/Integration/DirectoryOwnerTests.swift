import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsEmulator
import SegmentsTesting
import Testing

/// Behaviour P5: one process at a time owns a storage directory. Two `segments track` processes on one
/// directory: the second gets a clear `.storage` error and touches nothing; nothing the first
/// accepted is lost. Within one process, a second client is refused until the first stops.
@Suite(Hang.timeLimit(minutes: 2)) struct DirectoryOwnerTests {
    #if os(macOS) || os(Linux)  // starts child processes (`Process`)
    @Test func p5_aSecondProcessOnTheDirectoryGetsAClearErrorAndNothingIsLost() async throws {
        let fixture = try TrackFixture(projectToken: "owner")
        defer { fixture.tearDown() }
        let (executable, emulator, storage, arguments) = (fixture.executable, fixture.emulator, fixture.storage, fixture.arguments)
        emulator.injectFault(.status(503), on: .event, count: 100_000)  // the owner's items stay queued
        // A long --timeout: the owner's queue never empties (503s), and it must still own the folder
        // when the second process starts, however slow a loaded machine is.
        let owner = try TrackChild(
            executable: executable, arguments: arguments + ["--count", "20", "--prefix", "a", "--hold", "--timeout", "600"])
        let deadline = Date().addingTimeInterval(20)
        while owner.acceptedCount < 20, owner.isRunning, Date() < deadline { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(owner.acceptedCount == 20)

        let second = try TrackChild(executable: executable, arguments: arguments + ["--count", "20", "--prefix", "b"])
        let secondStatus = try await second.wait()
        let secondOutput = second.output()
        #expect(secondStatus == .exited(1))
        #expect(secondOutput.lines.isEmpty, "the second process tracked nothing: \(secondOutput.lines)")
        #expect(secondOutput.errors.contains("in use by another process"), "\(secondOutput.errors)")
        #expect(!secondOutput.errors.contains(storage.url.path), "the error does not name the folder (P4)")

        #expect(try await owner.killWithSIGKILL() == .killed)
        let ownerOutput = owner.output()
        emulator.clearFaults()
        let final = try TrackChild(executable: executable, arguments: arguments + ["--count", "0", "--timeout", "20"])
        #expect(try await final.wait() == .exited(0))
        let finalOutput = final.output()
        #expect(finalOutput.loaded == 20)
        let uploaded = Set(emulator.events.compactMap { event -> String? in
            guard case .string(let seq)? = event.properties["seq"] else { return nil }
            return seq
        })
        #expect(uploaded == Set(ownerOutput.accepted), "every event the owner accepted, and nothing else")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: storage.url.path)) ?? []
        #expect(!names.contains { $0.contains(".corrupt-") })
    }
    #endif

    @Test func p5_aSecondClientInTheProcessIsRefusedUntilTheFirstStops() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let first = ClientHarness(storage: .directory(directory.url))
        try first.configure(flushingMode: .manual)
        try first.client.trackEvent(properties: ["n": 1], timestamp: nil, eventType: "a")
        let second = ClientHarness(storage: .directory(directory.url))
        let error = #expect(throws: SegmentsError.self) { try second.configure(flushingMode: .manual) }
        #expect(error?.code == .storage)
        #expect(error?.message.contains("another SegmentsClient in this process") == true)
        #expect(!second.client.isConfigured)
        try first.configure(flushingMode: .manual)  // the owner may configure again
        first.client.stop()
        try second.configure(flushingMode: .manual)
        #expect(await second.client.countQueuedEvents() == 1)
    }
}
