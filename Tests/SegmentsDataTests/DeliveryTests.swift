import Foundation
import SegmentsData
import SegmentsDomain
import SegmentsTesting
import Testing

/// Change detection and delivery (Behaviour D).
@Suite(Hang.timeLimit(minutes: 2)) struct DeliveryTests {
    /// A harness with one reload done and the baseline holding `initial`.
    func loaded(_ initial: SegmentsByCategory) async -> EngineHarness {
        let harness = EngineHarness()
        harness.repository.answer(initial)
        harness.configure()
        harness.listen(.content())
        await harness.advance(by: 5)
        return harness
    }

    func reload(_ harness: EngineHarness, answering segments: SegmentsByCategory) async {
        harness.repository.answer(segments)
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
    }

    @Test func d1_everySuccessfulFetchReplacesTheBaselineAndRefreshesFetchedAt() async {
        let harness = await loaded([.discovery(): [Fixture.s1]])
        let first = harness.baselineStore.load().snapshot
        await harness.advance(by: 100)
        await reload(harness, answering: [.discovery(): [Fixture.s1]])
        let second = harness.baselineStore.load().snapshot
        #expect(first?.segments == second?.segments)
        #expect(second?.fetchedAt == harness.scheduler.now())
        #expect(second!.fetchedAt.timeIntervalSince(first!.fetchedAt) == 105)
    }

    /// Both comparisons see the reordered list: the baseline's (the category did not change) and
    /// the listener's own (it was told `[s1, s2]` by the first load, before any baseline existed).
    @Test func d2_reorderingIsNoChangeButAddingRemovingOrAlteringIs() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1, Fixture.s2]])
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(recorder.all == [[Fixture.s1, Fixture.s2]], "the listener was not told the first load")
        await reload(harness, answering: [.discovery(): [Fixture.s2, Fixture.s1]])
        #expect(recorder.count == 1, "a reordered list was told again: \(recorder.all)")
        await reload(harness, answering: [.discovery(): [Fixture.s2, Fixture.s1, Fixture.s3]])
        await reload(harness, answering: [.discovery(): [Fixture.s2, Fixture.s3]])
        var altered = Fixture.s3
        altered.attributes["name"] = "VVIP"
        await reload(harness, answering: [.discovery(): [Fixture.s2, altered]])
        #expect(
            recorder.all == [
                [Fixture.s1, Fixture.s2], [Fixture.s2, Fixture.s1, Fixture.s3], [Fixture.s2, Fixture.s3], [Fixture.s2, altered],
            ])
    }

    @Test func d3_aBaselineOfOtherIdsMakesEveryAnsweredCategoryChanged() async {
        let other = SegmentSnapshot(
            customer: CustomerIds(cookie: "someone-else"), segments: [.discovery(): [Fixture.s1]],
            fetchedAt: Date(timeIntervalSince1970: 0))
        let harness = EngineHarness(baseline: SegmentBaseline(snapshot: other))
        harness.repository.answer([.discovery(): [Fixture.s1], .merchandising(): []])
        harness.configure()
        let (discovery, _) = harness.listen(.discovery())
        let (merchandising, _) = harness.listen(.merchandising())
        await harness.advance(by: 5)
        #expect(discovery.all == [[Fixture.s1]])
        #expect(merchandising.all == [[]])
    }

    @Test func d4_aVanishedOrEmptiedCategoryChangesToEmpty() async {
        let harness = await loaded([.discovery(): [Fixture.s1], .content(): [Fixture.s2]])
        let (discovery, _) = harness.listen(.discovery())
        let (content, _) = harness.listen(.content())
        await harness.advance(by: 5)
        await reload(harness, answering: [.content(): []])
        #expect(discovery.all == [[]])
        #expect(content.all == [[]])
    }

    @Test func d5_onlyListenersOfChangedCategoriesAreToldTheFullList() async {
        let harness = await loaded([.discovery(): [Fixture.s1], .content(): [Fixture.s2]])
        let (discovery, _) = harness.listen(.discovery())
        let (content, _) = harness.listen(.content())
        let (custom, _) = harness.listen(SegmentCategory("recommendations"))
        await harness.advance(by: 5)
        await reload(
            harness,
            answering: [
                .discovery(): [Fixture.s1, Fixture.s3], .content(): [Fixture.s2],
                SegmentCategory("recommendations"): [Fixture.s1],
            ])
        #expect(discovery.all == [[Fixture.s1, Fixture.s3]])
        #expect(content.count == 0)
        #expect(custom.all == [[Fixture.s1]])
    }

    /// A change stream asks for no first load unless told to (the default, as for listeners):
    /// configuring requests no reload for it (T2), and its first element is the first change.
    @Test func d6_t2_aChangeStreamWithoutArgumentsWantsNoFirstLoad() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): []])
        var changes = harness.engine.changes(of: .discovery()).makeAsyncIterator()
        harness.configure()
        await harness.advance(by: 60)
        #expect(harness.fetchCount == 0)
        harness.repository.answer([.discovery(): [Fixture.s1]])
        _ = harness.read(force: true)
        await harness.advance()
        #expect(await changes.next() == [Fixture.s1])
    }

    @Test func d6_firstLoadIsDeliveredExactlyOnceEvenWhenNothingChanged() async {
        let harness = await loaded([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen(.discovery(), includeFirstLoad: true)
        let (emptyCategory, _) = harness.listen(.merchandising(), includeFirstLoad: true)
        await harness.advance(by: 5)
        await reload(harness, answering: [.discovery(): [Fixture.s1]])
        #expect(recorder.all == [[Fixture.s1]])
        #expect(emptyCategory.all == [[]])
    }

    @Test func d6_aFailedReloadKeepsTheFirstLoadPendingAndTheNextSuccessFulfilsItOnce() async {
        let harness = EngineHarness()
        harness.repository.failNextFetches(with: Fixture.transient)
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        harness.configure()
        await harness.advance(by: 5)
        #expect(recorder.count == 0)
        await harness.advance(by: 2)  // the retry succeeds
        #expect(recorder.all == [[Fixture.s1]])
        await reload(harness, answering: [.discovery(): [Fixture.s1]])
        #expect(recorder.all == [[Fixture.s1]])
    }

    @Test func d6_aDiscardedReloadKeepsTheFirstLoadPending() async {
        let harness = EngineHarness()
        harness.repository.delay = 1
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        harness.configure()
        await harness.advance(by: 5)
        harness.engine.identify(hardIds: ["registered": "b"])  // the answer for A will be discarded
        await harness.advance(by: 1)
        #expect(recorder.count == 0)
        await harness.advance(by: 5 + 1 + 1)
        #expect(recorder.all == [[]])
    }

    @Test func d7_listenersAreToldInRegistrationOrder() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        let order = Recorder<Int>()
        harness.configure()
        for index in 0..<20 {
            harness.engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { _ in
                order.record(index)
            })
        }
        await harness.advance(by: 5)
        #expect(order.all == Array(0..<20))
    }

    @Test func d7_aListenerRemovedWhileItsDeliveryIsQueuedIsNeverCalled() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (removed, token) = harness.listen(includeFirstLoad: true)
        let (kept, _) = harness.listen(includeFirstLoad: true)
        harness.deliveryQueue.suspend()
        await harness.scheduler.advance(by: 5)  // deliveries are queued but cannot run
        harness.engine.removeListener(token)
        harness.deliveryQueue.resume()
        harness.drainDeliveries()
        #expect(removed.count == 0)
        #expect(kept.all == [[Fixture.s1]])
    }

    @Test func d7_aSlowListenerNeverDelaysTheEngine() async {
        let harness = EngineHarness()
        harness.configure()
        harness.listen(includeFirstLoad: true)
        harness.deliveryQueue.suspend()  // as if a listener blocked the delivery queue
        await harness.scheduler.advance(by: 5)
        harness.engine.itemUploaded()
        await harness.scheduler.advance(by: 5)
        #expect(harness.fetchCount == 2)
        harness.deliveryQueue.resume()
    }

    @Test func d8_deliveriesRunOnTheDeliveryQueue() async {
        let harness = EngineHarness()
        let key = DispatchSpecificKey<String>()
        harness.deliveryQueue.setSpecific(key: key, value: "delivery")
        let queues = Recorder<String?>()
        harness.configure()
        harness.engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { _ in
            queues.record(DispatchQueue.getSpecific(key: key))
        })
        harness.engine.getSegments(force: true, category: .discovery()) { _ in
            queues.record(DispatchQueue.getSpecific(key: key))
        }
        await harness.advance(by: 5)
        #expect(queues.all == ["delivery", "delivery"])
    }

    @Test func d9_aFailedOrMalformedFetchDeliversNothingAndKeepsTheBaseline() async {
        let harness = await loaded([.discovery(): [Fixture.s1]])
        let (recorder, _) = harness.listen()
        await harness.advance(by: 5)
        let before = harness.baselineStore.load()
        harness.repository.failNextFetches(with: SegmentsError(.invalidResponse, "a JSON array where an object is expected"))
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(harness.fetchCount == 3)
        #expect(recorder.count == 0)
        #expect(harness.baselineStore.load() == before)
    }
}

extension DeliveryTests {
    @Test func d1_aBaselineThatCannotBeSavedIsLoggedAndStillServesThisSession() async {
        let harness = EngineHarness()
        harness.baselineStore.failSaves(with: SegmentsError(.storage, "disk full"))
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (recorder, _) = harness.listen(includeFirstLoad: true)
        await harness.advance(by: 5)
        #expect(recorder.all == [[Fixture.s1]])
        #expect(harness.logger.entries.contains { $0.level == .error && $0.message.hasPrefix("Segments: Saving the segments baseline failed") })
        let read = harness.read()
        await harness.advance()
        #expect(read.all.map(\.value) == [[Fixture.s1]])
        #expect(harness.fetchCount == 1)
    }

    // MARK: - Revision 2

    /// Defect: listeners kept another project's segments after re-configuring.
    @Test func d4_reconfiguringToAnotherProjectTellsListenersWhatTheyNoLongerHave() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (discovery, _) = harness.listen(.discovery())
        await harness.advance(by: 5)
        #expect(discovery.all == [[Fixture.s1]])

        harness.configureOtherProject(answering: [.content(): [Fixture.s3]])
        harness.engine.itemUploaded()
        await harness.advance(by: 5)
        #expect(discovery.all == [[Fixture.s1], []])
    }

    @Test func d4_whatListenersWereToldIsForgottenWithTheCategorysLastListener() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let (_, token) = harness.listen(.discovery())
        await harness.advance(by: 5)
        harness.engine.removeListener(token)

        let projectB = harness.configureOtherProject()
        let (newcomer, _) = harness.listen(.discovery())
        await harness.advance(by: 5)
        #expect(projectB.fetches.count == 1)
        #expect(newcomer.count == 0)  // it was never told [s1], so [] is no change for it
    }

    /// Defect: removal waited for a running handler, so a handler that syncs to the main queue
    /// deadlocked with a main thread removing it (or stopping, or re-configuring).
    @Test(arguments: ["removeListener", "stop", "configure"])
    func d7_aHandlerSyncingToTheMainQueueNeverDeadlocksWithMainEndingIt(_ ending: String) async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let main = DispatchQueue(label: "test.main")
        let handlerStarted = DispatchSemaphore(value: 0)
        let calls = Recorder<[Segment]>()
        let token = harness.engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { segments in
            calls.record(segments)
            handlerStarted.signal()
            main.sync {}  // needs the main thread, as UI code does
        })
        let ended = DispatchSemaphore(value: 0)
        main.async {
            handlerStarted.wait()
            switch ending {
            case "removeListener": harness.engine.removeListener(token)
            case "stop": harness.engine.stop()
            default: harness.configure()
            }
            ended.signal()
        }
        await harness.scheduler.advance(by: 5)
        guard await signalled(ended) else {  // generous: only a deadlock takes this long
            Issue.record("\(ending) waited for the running handler: deadlock")
            return  // draining the deadlocked delivery queue would hang the run
        }
        harness.drainDeliveries()
        #expect(calls.count == 1)
    }

    @Test func d7_removalReturnsWhileTheHandlerIsStillRunningAndNoNewCallStartsAfter() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let handlerStarted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let calls = Recorder<[Segment]>()
        let token = harness.engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { segments in
            calls.record(segments)
            handlerStarted.signal()
            release.wait()  // a slow handler
        })
        let removed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            handlerStarted.wait()
            harness.engine.removeListener(token)
            removed.signal()
        }
        await harness.scheduler.advance(by: 5)
        let returnedWhileRunning = await signalled(removed)
        release.signal()
        #expect(returnedWhileRunning)
        harness.repository.answer([.discovery(): [Fixture.s2]])
        _ = harness.read(force: true)
        await harness.advance()
        #expect(calls.all == [[Fixture.s1]])
    }

    @Test func d7_aHandlerMayRemoveItsOwnListenerAndIsNotCalledAgain() async {
        let harness = EngineHarness()
        harness.repository.answer([.discovery(): [Fixture.s1]])
        harness.configure()
        let calls = Recorder<[Segment]>()
        let token = Locked<ListenerToken?>(nil)
        let engine = harness.engine
        token.withLock {
            $0 = engine.addListener(SegmentListener(category: .discovery(), includeFirstLoad: true) { segments in
                calls.record(segments)
                if let own = token.value { engine.removeListener(own) }
            })
        }
        await harness.advance(by: 5)
        harness.repository.answer([.discovery(): [Fixture.s2]])
        _ = harness.read(force: true)
        await harness.advance()
        #expect(calls.all == [[Fixture.s1]])
        #expect(engine.listenerCount == 0)
    }
}
