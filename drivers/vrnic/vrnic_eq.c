// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic event queues and interrupts.
 *
 * MSI-X vector 0 serves the admin CQ and the async EQ (AEQ), which is set
 * up through the register page.  Vectors 1..N each serve one completion EQ
 * (CEQ), created with an admin command and armed through its doorbell
 * record.
 */

#include <linux/dma-mapping.h>

#include "vrnic.h"
#include "vrnic_verbs.h"

static struct vrnic_eqe *vrnic_eq_next(struct vrnic_eq *eq)
{
	struct vrnic_eqe *eqe = &eq->ring[vrnic_ring_slot(eq->ci, eq->log_depth)];
	u32 info = le32_to_cpu(READ_ONCE(eqe->info));

	if (FIELD_GET(VRNIC_EQE_OWNER_MASK, info) !=
	    vrnic_ring_owner(eq->ci, eq->log_depth))
		return NULL;
	/* Read the entry only after its owner bit says it is complete. */
	dma_rmb();
	return eqe;
}

static int vrnic_eq_alloc(struct vrnic_dev *dev, struct vrnic_eq *eq,
			  u32 eqn, u32 log_depth, bool dbrec)
{
	struct device *dmadev = &dev->pdev->dev;

	eq->dev = dev;
	eq->eqn = eqn;
	eq->log_depth = log_depth;
	eq->ci = 0;
	eq->arm_sn = 0;
	atomic_set(&eq->nop_seen, 0);
	init_waitqueue_head(&eq->nop_wait);
	eq->ring = dma_alloc_coherent(dmadev, sizeof(*eq->ring) << log_depth,
				      &eq->ring_dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;
	if (dbrec) {
		eq->dbrec = dma_alloc_coherent(dmadev, sizeof(*eq->dbrec),
					       &eq->dbrec_dma, GFP_KERNEL);
		if (!eq->dbrec) {
			dma_free_coherent(dmadev, sizeof(*eq->ring) << log_depth,
					  eq->ring, eq->ring_dma);
			eq->ring = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/* @err: how the device gave the EQ back (see vrnic_reclaim()). */
static void vrnic_eq_free(struct vrnic_dev *dev, struct vrnic_eq *eq, int err)
{
	vrnic_reclaim_coherent(dev, sizeof(*eq->dbrec), eq->dbrec,
			       eq->dbrec_dma, err);
	vrnic_reclaim_coherent(dev, sizeof(*eq->ring) << eq->log_depth,
			       eq->ring, eq->ring_dma, err);
	eq->dbrec = NULL;
	eq->ring = NULL;
}

static void vrnic_eq_nop(struct vrnic_eq *eq, u32 cookie)
{
	WRITE_ONCE(eq->nop_cookie, cookie);
	atomic_inc(&eq->nop_seen);
	wake_up(&eq->nop_wait);
}

int vrnic_aeq_init(struct vrnic_dev *dev)
{
	int err;

	err = vrnic_eq_alloc(dev, &dev->aeq, 0, VRNIC_AEQ_LOG_DEPTH, false);
	if (err)
		return err;
	vrnic_reg_write64(dev, VRNIC_REG_AEQ_BASE_LO, dev->aeq.ring_dma);
	vrnic_reg_write(dev, VRNIC_REG_AEQ_DEPTH, dev->aeq.log_depth);
	vrnic_reg_write(dev, VRNIC_REG_AEQ_CI, 0);
	return 0;
}

/* Only a reset takes the AEQ back: freed once one is confirmed. */
void vrnic_aeq_destroy(struct vrnic_dev *dev)
{
	vrnic_eq_free(dev, &dev->aeq, -EBUSY);
}

static void vrnic_aeq_handle(struct vrnic_dev *dev, struct vrnic_eqe *eqe)
{
	u32 type = FIELD_GET(VRNIC_EQE_TYPE_MASK, le32_to_cpu(eqe->info));
	u32 d0 = le32_to_cpu(eqe->data[0]);
	u32 d1 = le32_to_cpu(eqe->data[1]);
	u32 d2 = le32_to_cpu(eqe->data[2]);

	switch (type) {
	case VRNIC_EQE_TYPE_PORT_CHANGE:
		if (d0 != 1) {
			dev_warn_ratelimited(&dev->pdev->dev,
					     "port event for bad port %u\n", d0);
			return;
		}
		vrnic_port_event(dev, d1, d2);
		break;
	case VRNIC_EQE_TYPE_EQ_OVERRUN:
		dev_warn_ratelimited(&dev->pdev->dev,
				     "completion EQ %u overran\n", d0);
		break;
	case VRNIC_EQE_TYPE_NOP:
		vrnic_eq_nop(&dev->aeq, d0);
		break;
	case VRNIC_EQE_TYPE_CQ_ERROR:
	case VRNIC_EQE_TYPE_QP_FATAL:
	case VRNIC_EQE_TYPE_QP_REQ_ERR:
	case VRNIC_EQE_TYPE_QP_ACCESS_ERR:
	case VRNIC_EQE_TYPE_QP_COMM_EST:
	case VRNIC_EQE_TYPE_QP_SQ_DRAINED:
	case VRNIC_EQE_TYPE_QP_LAST_WQE:
	case VRNIC_EQE_TYPE_SRQ_LIMIT:
		vrnic_async_event(dev, type, d0);
		break;
	default:
		dev_warn_ratelimited(&dev->pdev->dev,
				     "unknown async event type %u\n", type);
		break;
	}
}

/*
 * An event about a CQ, QP or SRQ, delivered to its handler.  Objects are
 * looked up by number; destroying one removes it from its table and then
 * waits for this handler (vrnic_eq_sync()), so it is valid here.
 */
void vrnic_async_event(struct vrnic_dev *dev, u32 type, u32 num)
{
	struct ib_event ev = { .device = &dev->ibdev };
	struct vrnic_srq *srq;
	struct vrnic_cq *cq;
	struct vrnic_qp *qp;

	switch (type) {
	case VRNIC_EQE_TYPE_CQ_ERROR:
		cq = xa_load(&dev->cq_xa, num);
		if (!cq || !cq->ibcq.event_handler)
			return;
		ibdev_warn_ratelimited(&dev->ibdev, "CQ %u overran\n", num);
		ev.event = IB_EVENT_CQ_ERR;
		ev.element.cq = &cq->ibcq;
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		return;
	case VRNIC_EQE_TYPE_SRQ_LIMIT:
		srq = xa_load(&dev->srq_xa, num);
		if (!srq || !srq->ibsrq.event_handler)
			return;
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		ev.element.srq = &srq->ibsrq;
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		return;
	case VRNIC_EQE_TYPE_QP_FATAL:
		ev.event = IB_EVENT_QP_FATAL;
		break;
	case VRNIC_EQE_TYPE_QP_REQ_ERR:
		ev.event = IB_EVENT_QP_REQ_ERR;
		break;
	case VRNIC_EQE_TYPE_QP_ACCESS_ERR:
		ev.event = IB_EVENT_QP_ACCESS_ERR;
		break;
	case VRNIC_EQE_TYPE_QP_COMM_EST:
		ev.event = IB_EVENT_COMM_EST;
		break;
	case VRNIC_EQE_TYPE_QP_SQ_DRAINED:
		ev.event = IB_EVENT_SQ_DRAINED;
		break;
	case VRNIC_EQE_TYPE_QP_LAST_WQE:
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		break;
	default:
		return;
	}
	qp = xa_load(&dev->qp_xa, num);
	if (!qp || !qp->ibqp.event_handler)
		return;
	ev.element.qp = &qp->ibqp;
	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Wait until no handler of event queue eqn is running. */
void vrnic_eq_sync(struct vrnic_dev *dev, u32 eqn)
{
	if (eqn == 0)
		synchronize_irq(pci_irq_vector(dev->pdev, 0));
	else if (eqn <= dev->num_ceqs)
		synchronize_irq(dev->ceqs[eqn - 1].irq);
}

static void vrnic_aeq_process(struct vrnic_dev *dev)
{
	struct vrnic_eq *eq = &dev->aeq;
	struct vrnic_eqe *eqe;
	u32 budget;

	if (!eq->ring)
		return;
	for (budget = 1U << eq->log_depth; budget; budget--) {
		eqe = vrnic_eq_next(eq);
		if (!eqe)
			break;
		vrnic_aeq_handle(dev, eqe);
		eq->ci++;
	}
	vrnic_reg_write(dev, VRNIC_REG_AEQ_CI, eq->ci);
}

/* MSI-X vector 0: device state, admin completions, async events. */
irqreturn_t vrnic_ctrl_irq(int irq, void *data)
{
	struct vrnic_dev *dev = data;
	u32 state = vrnic_reg_read(dev, VRNIC_REG_STATE);

	if (state == VRNIC_STATE_GONE) {
		vrnic_dev_fatal(dev, "device shut down");
		return IRQ_HANDLED;
	}
	if (state == VRNIC_STATE_FATAL) {
		vrnic_dev_fatal(dev, vrnic_reg_read(dev, VRNIC_REG_FATAL_CODE) ==
				VRNIC_FATAL_DIED ? "the device process died" :
				"device reported a fatal error");
		return IRQ_HANDLED;
	}
	if (READ_ONCE(dev->cmdq.running))
		vrnic_cmdq_complete(&dev->cmdq);
	vrnic_aeq_process(dev);
	return IRQ_HANDLED;
}

static void vrnic_ceq_handle(struct vrnic_eq *eq, struct vrnic_eqe *eqe)
{
	u32 type = FIELD_GET(VRNIC_EQE_TYPE_MASK, le32_to_cpu(eqe->info));
	struct vrnic_cq *cq;

	switch (type) {
	case VRNIC_EQE_TYPE_COMPLETION:
		cq = xa_load(&eq->dev->cq_xa, le32_to_cpu(eqe->data[0]));
		if (cq && cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		break;
	case VRNIC_EQE_TYPE_NOP:
		vrnic_eq_nop(eq, le32_to_cpu(eqe->data[0]));
		break;
	default:
		dev_warn_ratelimited(&eq->dev->pdev->dev,
				     "unexpected event type %u on EQ %u\n",
				     type, eq->eqn);
		break;
	}
}

/*
 * Consume events, publish the consumer index and re-arm.  The device only
 * interrupts again for an arm it has not seen, so after arming look once
 * more: an event that slipped in before the arm gets handled here.
 */
static irqreturn_t vrnic_ceq_irq(int irq, void *data)
{
	struct vrnic_eq *eq = data;
	struct vrnic_eqe *eqe;
	u32 budget = 1U << eq->log_depth;

	do {
		while (budget && (eqe = vrnic_eq_next(eq))) {
			vrnic_ceq_handle(eq, eqe);
			eq->ci++;
			budget--;
		}
		WRITE_ONCE(eq->dbrec->ci, cpu_to_le32(eq->ci));
		WRITE_ONCE(eq->dbrec->arm_sn, cpu_to_le32(++eq->arm_sn));
		/* Order the arm before the re-check, against the device's
		 * post-then-check-arm.
		 */
		mb();
	} while (budget && vrnic_eq_next(eq));
	return IRQ_HANDLED;
}

/* Post a NOP event to @eq through the admin queue and wait for it. */
static int vrnic_eq_test_irq(struct vrnic_dev *dev, struct vrnic_eq *eq)
{
	u32 cookie = 0x4e4f5000 | eq->eqn;	/* "NOP" + eqn */
	int before = atomic_read(&eq->nop_seen);
	long left;
	int err;

	err = vrnic_cmd_nop_event(dev, eq->eqn, cookie);
	if (err)
		return err;
	left = wait_event_timeout(eq->nop_wait,
				  atomic_read(&eq->nop_seen) != before,
				  msecs_to_jiffies(VRNIC_IRQ_TEST_TIMEOUT_MS));
	if (!left)
		return -ETIMEDOUT;
	return READ_ONCE(eq->nop_cookie) == cookie ? 0 : -EIO;
}

static void vrnic_ceq_teardown(struct vrnic_dev *dev, struct vrnic_eq *eq)
{
	int err = 0;

	if (eq->created) {
		err = vrnic_cmd_destroy_eq(dev, eq->eqn);
		if (err && !vrnic_dead(dev))
			ibdev_warn(&dev->ibdev, "DESTROY_EQ %u failed\n",
				   eq->eqn);
		eq->created = false;
	}
	if (eq->irq_requested) {
		free_irq(eq->irq, eq);
		eq->irq_requested = false;
	}
	/* Not given back: kept until the device confirms a reset. */
	vrnic_eq_free(dev, eq, err);
}

static int vrnic_ceq_setup(struct vrnic_dev *dev, struct vrnic_eq *eq, u32 idx)
{
	int err;

	err = vrnic_eq_alloc(dev, eq, idx + 1, VRNIC_CEQ_LOG_DEPTH, true);
	if (err)
		return err;
	eq->vector = idx + 1;
	eq->irq = pci_irq_vector(dev->pdev, eq->vector);
	snprintf(eq->irq_name, sizeof(eq->irq_name), "vrnic-ceq%u@%s",
		 eq->eqn, pci_name(dev->pdev));
	err = request_irq(eq->irq, vrnic_ceq_irq, 0, eq->irq_name, eq);
	if (err)
		goto err_free;
	eq->irq_requested = true;

	err = vrnic_cmd_create_eq(dev, eq);
	if (err) {
		/* A device that died on CREATE_EQ may hold the ring. */
		eq->created = vrnic_dead(dev);
		goto err_free;
	}
	eq->created = true;

	/* Armed from the start. */
	WRITE_ONCE(eq->dbrec->arm_sn, cpu_to_le32(++eq->arm_sn));
	/* Publish the arm before the device posts the test event. */
	mb();

	err = vrnic_eq_test_irq(dev, eq);
	if (err) {
		dev_err(&dev->pdev->dev,
			"MSI-X vector %u does not deliver completion events (%d)\n",
			eq->vector, err);
		goto err_free;
	}
	return 0;

err_free:
	vrnic_ceq_teardown(dev, eq);
	return err;
}

int vrnic_ceqs_init(struct vrnic_dev *dev)
{
	u32 i, n = min_t(u32, dev->num_vectors - 1, dev->attrs.max_eq - 1);
	int err;

	dev->ceqs = kcalloc(n, sizeof(*dev->ceqs), GFP_KERNEL);
	if (!dev->ceqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = vrnic_ceq_setup(dev, &dev->ceqs[i], i);
		if (err)
			goto err_unwind;
	}
	dev->num_ceqs = n;
	return 0;

err_unwind:
	while (i--)
		vrnic_ceq_teardown(dev, &dev->ceqs[i]);
	kfree(dev->ceqs);
	dev->ceqs = NULL;
	return err;
}

void vrnic_ceqs_destroy(struct vrnic_dev *dev)
{
	u32 i;

	for (i = 0; i < dev->num_ceqs; i++)
		vrnic_ceq_teardown(dev, &dev->ceqs[i]);
	kfree(dev->ceqs);
	dev->ceqs = NULL;
	dev->num_ceqs = 0;
}
