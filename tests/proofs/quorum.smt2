; The untimed half of the node-count argument (src/check/reach.rs), for every number of nodes
; and clients: nodes, clients and quorums are uninterpreted sorts of any size, and a quorum
; system is described only by how two quorums intersect. The timed half is one axiom, the
; per-node lemma, which the model checker settles on one node (tests/quorum_proof.rs runs
; both). Every quantifier alternation goes Client -> Quorum -> Node, so the problem stays in
; the decidable effectively-propositional fragment ("Paxos Made EPR").
;
; Expected answers, in order: unsat unsat unsat sat sat.

(set-logic ALL)
(declare-sort Node 0)
(declare-sort Client 0)
(declare-sort Quorum 0)
(declare-fun member (Node Quorum) Bool)
(declare-fun won (Client Quorum) Bool)
(declare-fun applied (Node Client) Bool)   ; the node applied the client's SET and it counted
(declare-fun believes (Client) Bool)       ; at the instant of the supposed violation
(declare-fun bad (Node) Bool)              ; the node had a node fault (jump, crash, failover)

; A client believes only through a round won on a quorum, whose members all applied its SET.
(assert (forall ((c Client)) (=> (believes c) (exists ((q Quorum)) (won c q)))))
(assert (forall ((c Client) (q Quorum) (n Node)) (=> (and (won c q) (member n q)) (applied n c))))

; Two clients that believe at once, the supposed violation.
(declare-const i Client)
(declare-const j Client)
(assert (and (distinct i j) (believes i) (believes j)))

; Two majorities of an odd N share at least one node.
(define-fun odd-intersection () Bool
  (forall ((q1 Quorum) (q2 Quorum)) (exists ((n Node)) (and (member n q1) (member n q2)))))
; Two majorities of an even N share at least two.
(define-fun even-intersection () Bool
  (forall ((q1 Quorum) (q2 Quorum))
    (exists ((n1 Node) (n2 Node))
      (and (distinct n1 n2) (member n1 q1) (member n1 q2) (member n2 q1) (member n2 q2)))))

; The per-node lemma when the one-node scenario holds (argument "one node"): no node ever
; serves two clients that both believe.
(define-fun lemma-no-node () Bool
  (forall ((n Node) (a Client) (b Client))
    (not (and (distinct a b) (applied n a) (applied n b) (believes a) (believes b)))))
; The per-node lemma when the one-node scenario holds without node faults (argument "shared
; nodes"): a node that serves two believing clients had a node fault.
(define-fun lemma-bad-node () Bool
  (forall ((n Node) (a Client) (b Client))
    (=> (and (distinct a b) (applied n a) (applied n b) (believes a) (believes b)) (bad n))))
; A fault budget that reaches at most one node.
(define-fun one-bad-node () Bool
  (forall ((n1 Node) (n2 Node)) (=> (and (bad n1) (bad n2)) (= n1 n2))))

; 1. One node: no violation at any odd N ...
(push) (assert odd-intersection) (assert lemma-no-node) (check-sat) (pop)
; 2. ... nor at any even N.
(push) (assert even-intersection) (assert lemma-no-node) (check-sat) (pop)
; 3. Shared nodes: with one bad node, no violation at any even N.
(push) (assert even-intersection) (assert lemma-bad-node) (assert one-bad-node) (check-sat) (pop)
; 4. The same budget at odd N leaves a violation open (a model exists) ...
(push) (assert odd-intersection) (assert lemma-bad-node) (assert one-bad-node) (check-sat) (pop)
; 5. ... and so do two bad nodes at even N.
(push) (assert even-intersection) (assert lemma-bad-node) (check-sat) (pop)
