//! The raw client's engine: the pacer thread writes each request itself, at
//! its intended time, on a free keep-alive connection; tokio tasks (one per
//! connection, all on one runtime thread) read the answers.
//!
//! Writing from the pacer thread removes a hop: no channel, no waking the
//! runtime to send. Per request there are two wake-ups (the pacer's timer and
//! the answer arriving) instead of three, which on a 2-core machine shared
//! with the daemon means less CPU taken from it and a send lag that is only
//! the timer's own lateness.
//!
//! A connection carries one request at a time. The pacer keeps the free ones
//! in a FIFO; a reader hands its connection back (over a std channel) once
//! the answer is in. When every connection is busy, due requests wait in a
//! backlog and go out as connections free up, their latency still counted
//! from the intended time.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch};

use crate::http::{Parse, parse_response, until_close};
use crate::mix::Mix;
use crate::schedule::{Schedule, precise_sleep_until, tighten_timer_slack};
use crate::tally::Tally;

/// A request on the wire, for the reader to time.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    intended: Instant,
    sent: Instant,
    measured: bool,
}

/// What a reader tells the pacer about its connection.
struct Freed {
    id: usize,
    /// The new stream, when the reader had to reconnect.
    stream: Option<Arc<TcpStream>>,
    /// The connection is free again (false: it was idle, only the stream changed).
    release: bool,
}

/// One connection's shared state: the stream and the request in flight.
struct Slot {
    stream: Arc<TcpStream>,
    in_flight: Arc<Mutex<Option<InFlight>>>,
}

/// The fixed parameters of one run.
pub(crate) struct Engine {
    /// The rate.
    pub schedule: Schedule,
    /// When request 0 is due.
    pub start: Instant,
    /// Requests `0..warmup_n` are not recorded.
    pub warmup_n: u64,
    /// Requests `0..total` are sent.
    pub total: u64,
    /// Requests not sent by then are counted as unsent.
    pub deadline: Instant,
    /// An answer later than this after its send is a timeout.
    pub timeout: Duration,
    /// The daemon's address, to reconnect.
    pub addr: SocketAddr,
    /// The complete request bytes of each mix entry.
    pub requests: Arc<Vec<Vec<u8>>>,
    /// Which entry request `i` sends.
    pub mix: Mix,
}

impl Engine {
    /// Runs the schedule over `streams` (already connected) and returns the
    /// merged tally of the pacer and the readers.
    pub(crate) async fn run(self, streams: Vec<TcpStream>) -> anyhow::Result<Tally> {
        let (freed_tx, freed_rx) = std::sync::mpsc::channel::<Freed>();
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut slots = Vec::with_capacity(streams.len());
        let mut readers = Vec::with_capacity(streams.len());
        for (id, stream) in streams.into_iter().enumerate() {
            let stream = Arc::new(stream);
            let in_flight = Arc::new(Mutex::new(None));
            slots.push(Slot {
                stream: Arc::clone(&stream),
                in_flight: Arc::clone(&in_flight),
            });
            let reader = Reader {
                id,
                stream,
                in_flight,
                freed: freed_tx.clone(),
                addr: self.addr,
                timeout: self.timeout,
                give_up: self.deadline + self.timeout,
                buf: vec![0; 16 * 1024],
                filled: 0,
                tally: Tally::default(),
            };
            readers.push(tokio::spawn(reader.run(stop_rx.clone())));
        }
        drop(freed_tx);
        let (done_tx, done_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("toolgate-load-pacer".into())
            .spawn(move || {
                let tally = self.pace(slots, freed_rx);
                let _ = done_tx.send(tally);
            })?;
        let mut tally = done_rx
            .await
            .map_err(|_| anyhow::anyhow!("the pacer thread panicked"))?;
        let _ = stop_tx.send(true);
        for reader in readers {
            tally.merge(reader.await?);
        }
        Ok(tally)
    }

    /// The pacer thread: releases requests at their times, writes each on a
    /// free connection, and waits for the last answers.
    fn pace(self, mut slots: Vec<Slot>, freed: Receiver<Freed>) -> Tally {
        tighten_timer_slack();
        let mut tally = Tally::default();
        let mut free: VecDeque<usize> = (0..slots.len()).collect();
        let mut backlog: VecDeque<(u64, Instant)> = VecDeque::new();
        let mut released = 0u64;
        let give_back = |f: Freed, slots: &mut [Slot], free: &mut VecDeque<usize>| {
            if let Some(s) = f.stream {
                slots[f.id].stream = s;
            }
            if f.release {
                free.push_back(f.id);
            }
        };
        loop {
            while let Ok(f) = freed.try_recv() {
                give_back(f, &mut slots, &mut free);
            }
            let now = Instant::now();
            if now > self.deadline {
                // Out of time: what was never sent is counted, not sent.
                let left = backlog.iter().map(|&(i, _)| i).chain(released..self.total);
                tally.unsent += left.filter(|&i| i >= self.warmup_n).count() as u64;
                backlog.clear();
                released = self.total;
            }
            let due = self
                .schedule
                .due(nanos(now.saturating_duration_since(self.start)));
            let due = if now < self.start {
                0
            } else {
                due.min(self.total)
            };
            while released < due {
                let at = self.start + Duration::from_nanos(self.schedule.offset_ns(released));
                if released >= self.warmup_n {
                    tally
                        .timer_lag_ns
                        .push(nanos(now.saturating_duration_since(at)));
                }
                backlog.push_back((released, at));
                released += 1;
            }
            while !backlog.is_empty() && !free.is_empty() {
                let (index, intended) = backlog.pop_front().expect("not empty");
                let id = free.pop_front().expect("not empty");
                self.send(&slots[id], index, intended, &mut tally);
            }
            if backlog.front().is_some_and(|&(i, _)| i >= self.warmup_n) {
                tally.max_queued = tally.max_queued.max(backlog.len() as u64);
            }
            if released == self.total && backlog.is_empty() {
                break;
            }
            if backlog.is_empty() {
                let next = self.start + Duration::from_nanos(self.schedule.offset_ns(released));
                precise_sleep_until(next);
            } else {
                // Every connection is busy: wait for one, or for the deadline.
                let wait = self.deadline.saturating_duration_since(Instant::now())
                    + Duration::from_millis(1);
                match freed.recv_timeout(wait) {
                    Ok(f) => give_back(f, &mut slots, &mut free),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        }
        // Wait for the answers still in flight (the readers time them out).
        let last = self.deadline + self.timeout + Duration::from_secs(1);
        while free.len() < slots.len() {
            match freed.recv_timeout(last.saturating_duration_since(Instant::now())) {
                Ok(f) => give_back(f, &mut slots, &mut free),
                Err(_) => break,
            }
        }
        tally
    }

    fn send(&self, slot: &Slot, index: u64, intended: Instant, tally: &mut Tally) {
        let measured = index >= self.warmup_n;
        let now = Instant::now();
        *slot.in_flight.lock().expect("not poisoned") = Some(InFlight {
            intended,
            sent: now,
            measured,
        });
        if measured {
            tally.sent += 1;
            tally
                .send_lag_ns
                .push(nanos(now.saturating_duration_since(intended)));
        }
        let request = &self.requests[self.mix.pick(index)];
        // The previous answer has been read, so the socket's send buffer is
        // empty and the write goes through at once. If it does not, the
        // reader's timeout deals with the request.
        let mut off = 0;
        let give_up = now + Duration::from_millis(10);
        while off < request.len() {
            match slot.stream.try_write(&request[off..]) {
                Ok(n) => off += n,
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < give_up =>
                {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Err(_) => break, // the reader sees the broken connection
            }
        }
    }
}

/// The task that reads one connection's answers.
struct Reader {
    id: usize,
    stream: Arc<TcpStream>,
    in_flight: Arc<Mutex<Option<InFlight>>>,
    freed: Sender<Freed>,
    addr: SocketAddr,
    timeout: Duration,
    /// Stop trying to reconnect after this.
    give_up: Instant,
    buf: Vec<u8>,
    filled: usize,
    tally: Tally,
}

/// What a read turned up.
enum Event {
    /// More bytes, the answer not complete yet.
    Nothing,
    /// A whole answer.
    Answer {
        status: u16,
        body: Vec<u8>,
        close: bool,
    },
    /// The connection failed or closed.
    Broken(String),
}

impl Reader {
    async fn run(mut self, mut stop: watch::Receiver<bool>) -> Tally {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            let stream = Arc::clone(&self.stream);
            let carry_on = tokio::select! {
                ready = stream.readable() => {
                    let event = match ready {
                        Ok(()) => self.read(),
                        Err(e) => Event::Broken(e.to_string()),
                    };
                    self.on(event).await
                }
                _ = tick.tick() => self.check_timeout().await,
                _ = stop.changed() => false,
            };
            if !carry_on {
                break;
            }
        }
        self.tally
    }

    /// Handles what a read turned up; false when the reader must stop.
    async fn on(&mut self, event: Event) -> bool {
        let done = Instant::now();
        let (job, close) = match event {
            Event::Nothing => return true,
            Event::Answer {
                status,
                body,
                close,
            } => {
                let job = self.in_flight.lock().expect("not poisoned").take();
                if let Some(job) = job.filter(|j| j.measured) {
                    self.tally.answer(job.intended, done, status, &body);
                }
                // An answer to nothing means the stream is out of step.
                (job, close || job.is_none())
            }
            Event::Broken(why) => {
                let job = self.in_flight.lock().expect("not poisoned").take();
                if job.is_some_and(|j| j.measured) {
                    self.tally.failed(done, why);
                }
                // Closed while idle is a keep-alive timeout: reopen quietly.
                (job, true)
            }
        };
        self.hand_back(close, job.is_some()).await
    }

    /// Times out the request in flight if it has waited too long.
    async fn check_timeout(&mut self) -> bool {
        let overdue = {
            let mut slot = self.in_flight.lock().expect("not poisoned");
            match *slot {
                Some(job) if job.sent.elapsed() > self.timeout => slot.take(),
                _ => None,
            }
        };
        match overdue {
            Some(job) => {
                if job.measured {
                    self.tally.timeouts += 1;
                    self.tally.last_done = Some(Instant::now());
                }
                self.hand_back(true, true).await
            }
            None => true,
        }
    }

    /// Tells the pacer about the connection: on a new stream if `reconnect`,
    /// free again if `release`. False when no new connection could be opened.
    async fn hand_back(&mut self, reconnect: bool, release: bool) -> bool {
        let stream = if reconnect {
            if !self.reconnect().await {
                return false;
            }
            Some(Arc::clone(&self.stream))
        } else {
            None
        };
        if stream.is_some() || release {
            let _ = self.freed.send(Freed {
                id: self.id,
                stream,
                release,
            });
        }
        true
    }

    /// Reads what is there and looks for a complete answer.
    fn read(&mut self) -> Event {
        let mut closed = false;
        loop {
            if self.filled == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            match self.stream.try_read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Event::Broken(e.to_string()),
            }
        }
        let answer = match parse_response(&self.buf[..self.filled]) {
            Ok(Parse::Complete(r)) => Some(r),
            Ok(Parse::Partial) if closed => until_close(&self.buf[..self.filled]),
            Ok(Parse::Partial) => return Event::Nothing,
            Err(why) => return Event::Broken(format!("bad HTTP answer: {why}")),
        };
        match answer {
            Some(r) => {
                let body = match r.body_owned {
                    Some(b) => b,
                    None => self.buf[r.body.0..r.body.1].to_vec(),
                };
                self.filled = 0;
                Event::Answer {
                    status: r.status,
                    body,
                    close: r.close || closed,
                }
            }
            None => Event::Broken("the daemon closed the connection before answering".into()),
        }
    }

    /// Opens a new connection, retrying every 100 ms while the daemon
    /// refuses, until the run is over. False if it never could.
    async fn reconnect(&mut self) -> bool {
        self.filled = 0;
        loop {
            match TcpStream::connect(self.addr).await {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    self.stream = Arc::new(s);
                    return true;
                }
                Err(e) => {
                    *self
                        .tally
                        .io_errors
                        .entry(format!("reconnecting: {e}"))
                        .or_default() += 1;
                    if Instant::now() > self.give_up {
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
