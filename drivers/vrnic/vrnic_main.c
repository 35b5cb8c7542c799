// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic: PCI probe and removal, device bring-up and ib_device registration.
 *
 * Bring-up: check the signature in BAR2, reset the device, set up MSI-X,
 * the admin queue and the async EQ, enable, query the device, create the
 * completion EQs and test their interrupts.  Only then is the ib_device
 * registered.  Removal undoes it in reverse.
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/module.h>

#include "vrnic-abi.h"
#include "vrnic.h"
#include "vrnic_compat.h"
#include "vrnic_verbs.h"

MODULE_AUTHOR("vrnic developers");
MODULE_DESCRIPTION("vrnic virtual RDMA NIC driver");
MODULE_LICENSE("GPL");

static const struct pci_device_id vrnic_pci_tbl[] = {
	{ PCI_DEVICE(VRNIC_PCI_VENDOR_ID, VRNIC_PCI_DEVICE_ID) },
	{}
};
MODULE_DEVICE_TABLE(pci, vrnic_pci_tbl);

/*
 * No completion will come from a dead device: run every CQ's completion
 * handler once, as mlx5 does on an internal error, so that a consumer
 * asleep in ibv_get_cq_event() (or a ULP waiting on its CQ) wakes up, polls
 * and finds out.  The xarray lock keeps destroy_cq from freeing a CQ under
 * its handler.
 */
static void vrnic_wake_cqs(struct vrnic_dev *dev)
{
	unsigned long flags, num;
	struct vrnic_cq *cq;

	xa_lock_irqsave(&dev->cq_xa, flags);
	xa_for_each(&dev->cq_xa, num, cq)
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	xa_unlock_irqrestore(&dev->cq_xa, flags);
}

/**
 * vrnic_dev_fatal - the device is dead; stop using it
 * @dev: the device
 * @why: reason, for the log
 *
 * Any context.  Fails every admin command in flight and later, and tells
 * RDMA users with IB_EVENT_DEVICE_FATAL.  Happens once.
 */
void vrnic_dev_fatal(struct vrnic_dev *dev, const char *why)
{
	struct ib_event ev = {};
	unsigned long flags;

	if (test_and_set_bit(VRNIC_FLAG_FATAL, &dev->flags))
		return;
	dev_err(&dev->pdev->dev, "device is dead: %s (state %u, code %u)\n",
		why, vrnic_reg_read(dev, VRNIC_REG_STATE),
		vrnic_reg_read(dev, VRNIC_REG_FATAL_CODE));
	vrnic_cmdq_abort(&dev->cmdq);
	if (test_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags)) {
		ev.device = &dev->ibdev;
		ev.element.port_num = 1;
		ev.event = IB_EVENT_DEVICE_FATAL;
		ib_dispatch_event(&ev);
		vrnic_wake_cqs(dev);
		/*
		 * Get it back: reset it, then probe it again (vrnic_recover()).
		 * A device that dies while being probed fails the probe instead.
		 */
		spin_lock_irqsave(&dev->recover_lock, flags);
		if (!test_bit(VRNIC_FLAG_REMOVING, &dev->flags))
			queue_delayed_work(system_long_wq, &dev->recover_work, 0);
		spin_unlock_irqrestore(&dev->recover_lock, flags);
	}
}

/*
 * Probing a device again after it recovered, from the module's own
 * workqueue: the probe replaces the vrnic_dev, so the work cannot be
 * the device's.  A reprobe that is queued or under way when the admin
 * unbinds the device (vrnic_remove() not called by the reprobe itself) is
 * cancelled: it must not bind again a device the admin just took away.
 */
static struct workqueue_struct *vrnic_wq;
static DEFINE_SPINLOCK(vrnic_wq_lock);
static bool vrnic_unloading;	/* protected by vrnic_wq_lock */
static LIST_HEAD(vrnic_reprobes);	/* protected by vrnic_wq_lock */

/* For tests: how long a reprobe waits in the queue. */
static unsigned int reprobe_delay_ms;
module_param(reprobe_delay_ms, uint, 0644);
MODULE_PARM_DESC(reprobe_delay_ms,
		 "delay before a recovered device is probed again (ms; for tests)");

struct vrnic_reprobe {
	struct delayed_work work;
	struct pci_dev *pdev;
	struct list_head node;
	bool cancelled;		/* protected by vrnic_wq_lock */
};

static void vrnic_reprobe(struct work_struct *work)
{
	struct vrnic_reprobe *r = container_of(to_delayed_work(work),
					       struct vrnic_reprobe, work);
	bool cancelled;
	int err;

	spin_lock(&vrnic_wq_lock);
	cancelled = r->cancelled;
	spin_unlock(&vrnic_wq_lock);
	/* Unbinds (vrnic_remove()) and probes again, under the device lock. */
	err = cancelled ? 0 : device_reprobe(&r->pdev->dev);
	spin_lock(&vrnic_wq_lock);
	cancelled = r->cancelled;
	list_del(&r->node);
	spin_unlock(&vrnic_wq_lock);
	if (cancelled)
		dev_info(&r->pdev->dev, "unbound while it recovered: left unbound\n");
	else if (err)
		dev_err(&r->pdev->dev, "probing the device again failed: %d\n", err);
	pci_dev_put(r->pdev);
	kfree(r);
}

/*
 * The device is being unbound, or probed.  Called by the reprobe work of
 * pdev itself, that is the reprobe; called by anyone else, it cancels
 * the reprobes of pdev.  Returns whether a cancelled reprobe is the
 * caller: its probe must not bind the device.
 */
static bool vrnic_cancel_reprobes(struct pci_dev *pdev)
{
	struct work_struct *self = current_work();
	struct vrnic_reprobe *r;
	bool cancelled_self = false;

	spin_lock(&vrnic_wq_lock);
	list_for_each_entry(r, &vrnic_reprobes, node) {
		if (r->pdev != pdev)
			continue;
		if (self == &r->work.work)
			cancelled_self = r->cancelled;
		else
			r->cancelled = true;
	}
	spin_unlock(&vrnic_wq_lock);
	return cancelled_self;
}

static void vrnic_schedule_reprobe(struct pci_dev *pdev)
{
	struct vrnic_reprobe *r = kzalloc(sizeof(*r), GFP_KERNEL);

	/* Out of memory: the device stays dead; rebinding it recovers. */
	if (!r)
		return;
	INIT_DELAYED_WORK(&r->work, vrnic_reprobe);
	r->pdev = pci_dev_get(pdev);
	spin_lock(&vrnic_wq_lock);
	if (!vrnic_unloading) {
		list_add_tail(&r->node, &vrnic_reprobes);
		queue_delayed_work(vrnic_wq, &r->work,
				   msecs_to_jiffies(READ_ONCE(reprobe_delay_ms)));
		r = NULL;
	}
	spin_unlock(&vrnic_wq_lock);
	if (r) {
		pci_dev_put(r->pdev);
		kfree(r);
	}
}

/* The device counts heartbeats while it lives; notice when it stops. */
static void vrnic_watchdog(struct work_struct *work)
{
	struct vrnic_dev *dev =
		container_of(work, struct vrnic_dev, watchdog.work);
	u32 hb = vrnic_reg_read(dev, VRNIC_REG_HEARTBEAT);
	u32 state = vrnic_reg_read(dev, VRNIC_REG_STATE);

	if (vrnic_dead(dev))
		return;
	if (state != VRNIC_STATE_READY) {
		vrnic_dev_fatal(dev, "device left the READY state");
		return;
	}
	if (hb == dev->last_heartbeat) {
		if (++dev->heartbeat_misses >= VRNIC_WATCHDOG_MISSES) {
			vrnic_dev_fatal(dev, "device heartbeat stopped");
			return;
		}
	} else {
		dev->heartbeat_misses = 0;
		dev->last_heartbeat = hb;
	}
	queue_delayed_work(system_unbound_wq, &dev->watchdog,
			   msecs_to_jiffies(VRNIC_WATCHDOG_MS));
}

static int vrnic_wait_reg(struct vrnic_dev *dev, u32 off, u32 mask, u32 val,
			  unsigned int timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);

	for (;;) {
		if ((vrnic_reg_read(dev, off) & mask) == val)
			return 0;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(100, 1000);
	}
}

/* Reset the device: it drops every object and stops all DMA. */
static int vrnic_dev_reset_quiet(struct vrnic_dev *dev)
{
	vrnic_reg_write(dev, VRNIC_REG_CTRL, VRNIC_CTRL_RESET);
	vrnic_ring_db(dev, VRNIC_DB_CHANNEL_CTRL);
	return vrnic_wait_reg(dev, VRNIC_REG_CTRL, VRNIC_CTRL_RESET, 0,
			      VRNIC_RESET_TIMEOUT_MS);
}

static int vrnic_dev_reset(struct vrnic_dev *dev)
{
	int err = vrnic_dev_reset_quiet(dev);

	if (err)
		dev_err(&dev->pdev->dev,
			"device did not complete reset within %u ms; is vrnicd running?\n",
			VRNIC_RESET_TIMEOUT_MS);
	return err;
}

/*
 * The device is dead: reset it, and once it confirms, free what it held
 * and probe it again.  A device that does not answer is asked again, less
 * and less often: it may only be stalled.
 */
static void vrnic_recover(struct work_struct *work)
{
	struct vrnic_dev *dev = container_of(to_delayed_work(work),
					     struct vrnic_dev, recover_work);
	unsigned long delay_ms;

	if (!vrnic_dev_reset_quiet(dev)) {
		dev_info(&dev->pdev->dev, "device reset; probing it again\n");
		vrnic_dev_quiesced(dev);
		vrnic_schedule_reprobe(dev->pdev);
		return;
	}
	if (!dev->recover_tries++)
		dev_warn(&dev->pdev->dev,
			 "the dead device does not confirm a reset; asking again until it does\n");
	delay_ms = min_t(unsigned long,
			 VRNIC_WATCHDOG_MS << min(dev->recover_tries, 4U),
			 VRNIC_RECOVER_MAX_DELAY_MS);
	queue_delayed_work(system_long_wq, &dev->recover_work,
			   msecs_to_jiffies(delay_ms));
}

/* No recovery from now on: the device is going away. */
static void vrnic_stop_recovery(struct vrnic_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->recover_lock, flags);
	set_bit(VRNIC_FLAG_REMOVING, &dev->flags);
	spin_unlock_irqrestore(&dev->recover_lock, flags);
	cancel_delayed_work_sync(&dev->recover_work);
}

/*
 * Take back everything the device was lent: reset it (a device that shut
 * down holds nothing) and free the rings.  Without a confirmed reset the
 * memory is kept, and the log says so.
 */
static void vrnic_hw_teardown(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;

	WRITE_ONCE(dev->cmdq.running, false);
	vrnic_stop_recovery(dev);
	if (vrnic_reg_read(dev, VRNIC_REG_STATE) == VRNIC_STATE_GONE ||
	    !vrnic_dev_reset(dev))
		vrnic_dev_quiesced(dev);
	/* No handler may look at the rings while they go. */
	free_irq(pci_irq_vector(pdev, 0), dev);
	vrnic_aeq_destroy(dev);
	vrnic_cmdq_destroy(dev);
	vrnic_dev_abandon_lent(dev);
}

static int vrnic_dev_enable(struct vrnic_dev *dev)
{
	u32 state;
	int err;

	vrnic_reg_write(dev, VRNIC_REG_CTRL, VRNIC_CTRL_ENABLE);
	vrnic_ring_db(dev, VRNIC_DB_CHANNEL_CTRL);
	err = vrnic_wait_reg(dev, VRNIC_REG_STATE, ~0U, VRNIC_STATE_READY,
			     VRNIC_ENABLE_TIMEOUT_MS);
	if (err) {
		state = vrnic_reg_read(dev, VRNIC_REG_STATE);
		dev_err(&dev->pdev->dev,
			"device refused ENABLE: state %u, fatal code %u\n",
			state, vrnic_reg_read(dev, VRNIC_REG_FATAL_CODE));
	}
	return err;
}

/* Is this ivshmem function a vrnic?  Reads BAR2 only. */
static int vrnic_check_signature(struct pci_dev *pdev)
{
	void __iomem *shm;
	u32 magic, version;

	if (!(pci_resource_flags(pdev, VRNIC_BAR_SHMEM) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, VRNIC_BAR_SHMEM) < VRNIC_BAR2_MIN_SIZE) {
		dev_info(&pdev->dev,
			 "ivshmem BAR2 missing or too small for a vrnic; not a vrnic device\n");
		return -ENODEV;
	}
	shm = pci_iomap(pdev, VRNIC_BAR_SHMEM, VRNIC_BAR2_PAGE_SIZE);
	if (!shm)
		return -ENOMEM;
	magic = readl(shm + VRNIC_REG_MAGIC);
	version = readl(shm + VRNIC_REG_VERSION);
	pci_iounmap(pdev, shm);

	if (magic != VRNIC_MAGIC) {
		dev_info(&pdev->dev,
			 "no vrnic signature in BAR2 (found %#010x, want %#010x); not a vrnic device, leaving it alone\n",
			 magic, VRNIC_MAGIC);
		return -ENODEV;
	}
	if (FIELD_GET(VRNIC_VERSION_MAJOR_MASK, version) != VRNIC_VERSION_MAJOR) {
		dev_err(&pdev->dev,
			"vrnic interface version %u.%u is not supported (driver speaks %u.x)\n",
			(u32)FIELD_GET(VRNIC_VERSION_MAJOR_MASK, version),
			(u32)FIELD_GET(VRNIC_VERSION_MINOR_MASK, version),
			VRNIC_VERSION_MAJOR);
		return -ENODEV;
	}
	return 0;
}

static int vrnic_map_bars(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	resource_size_t bar0 = pci_resource_start(pdev, VRNIC_BAR_REGS);
	resource_size_t bar0_len = pci_resource_len(pdev, VRNIC_BAR_REGS);
	int err;

	if (bar0_len < VRNIC_IVSHMEM_BAR_SIZE) {
		dev_err(&pdev->dev, "BAR0 is too small (%pa)\n", &bar0_len);
		return -ENODEV;
	}
	err = pci_request_regions(pdev, VRNIC_DRV_NAME);
	if (err)
		return err;
	dev->regs = pci_iomap(pdev, VRNIC_BAR_REGS, VRNIC_IVSHMEM_BAR_SIZE);
	dev->shm = pci_iomap(pdev, VRNIC_BAR_SHMEM, 2 * VRNIC_BAR2_PAGE_SIZE);
	if (!dev->regs || !dev->shm) {
		err = -ENOMEM;
		goto err_unmap;
	}

	/*
	 * User contexts get the BAR0 page for kernel-bypass doorbells only
	 * when no other device's registers share that page.  ivshmem's BAR0
	 * is 256 bytes; pci=resource_alignment=12@pci:1af4:1110 gives it a
	 * page of its own.
	 */
	dev->user_db = PAGE_ALIGNED(bar0) && bar0_len >= PAGE_SIZE;
	if (!dev->user_db)
		dev_info(&pdev->dev,
			 "BAR0 shares a page with other devices; user doorbells need pci=resource_alignment=12@pci:%04x:%04x\n",
			 VRNIC_PCI_VENDOR_ID, VRNIC_PCI_DEVICE_ID);
	return 0;

err_unmap:
	if (dev->shm)
		pci_iounmap(pdev, dev->shm);
	if (dev->regs)
		pci_iounmap(pdev, dev->regs);
	pci_release_regions(pdev);
	return err;
}

static void vrnic_unmap_bars(struct vrnic_dev *dev)
{
	pci_iounmap(dev->pdev, dev->shm);
	pci_iounmap(dev->pdev, dev->regs);
	pci_release_regions(dev->pdev);
}

static int vrnic_request_vectors(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int dev_vecs = vrnic_reg_read(dev, VRNIC_REG_NUM_VECTORS);
	int want, got;

	want = min3(dev_vecs, pci_msix_vec_count(pdev),
		    (int)num_online_cpus() + 1);
	if (want < 2) {
		dev_err(&pdev->dev,
			"need at least 2 MSI-X vectors (device drives %d, function has %d)\n",
			dev_vecs, pci_msix_vec_count(pdev));
		return -ENODEV;
	}
	got = pci_alloc_irq_vectors(pdev, 2, want, PCI_IRQ_MSIX);
	if (got < 0) {
		dev_err(&pdev->dev, "cannot allocate MSI-X vectors: %d\n", got);
		return got;
	}
	dev->num_vectors = got;
	return 0;
}

/*
 * With the admin queue set up: the async event queue, ENABLE, what the
 * device and its port are, and the completion event queues.
 */
static int vrnic_dev_start(struct vrnic_dev *dev)
{
	int err;

	err = vrnic_aeq_init(dev);
	if (err)
		return err;
	err = vrnic_dev_enable(dev);
	if (err)
		return err;
	dev->cmdq.running = true;

	err = vrnic_cmd_query_device(dev, &dev->attrs);
	if (err)
		return err;
	err = vrnic_cmd_query_port(dev, &dev->port);
	if (err)
		return err;
	dev->port_state = dev->port.state;
	return vrnic_ceqs_init(dev);
}

/* Bring the hardware up, short of registering with ib_core. */
static int vrnic_probe_dev(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int err;

	err = vrnic_map_bars(dev);
	if (err)
		return err;
	dev->db_peer = vrnic_reg_read(dev, VRNIC_REG_DB_PEER) &
		       FIELD_MAX(VRNIC_DOORBELL_PEER_MASK);
	dev->caps = vrnic_reg_read(dev, VRNIC_REG_CAPS_LO) |
		    (u64)vrnic_reg_read(dev, VRNIC_REG_CAPS_HI) << 32;

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_unmap;
	pci_set_master(pdev);

	err = vrnic_dev_reset(dev);
	if (err)
		goto err_clear_master;

	err = vrnic_request_vectors(dev);
	if (err)
		goto err_clear_master;
	err = request_irq(pci_irq_vector(pdev, 0), vrnic_ctrl_irq, 0,
			  VRNIC_DRV_NAME "-ctrl", dev);
	if (err)
		goto err_free_vectors;

	err = vrnic_cmdq_init(dev);
	if (err)
		goto err_free_irq;
	err = vrnic_dev_start(dev);
	if (err)
		goto err_teardown;

	dev->last_heartbeat = vrnic_reg_read(dev, VRNIC_REG_HEARTBEAT);
	INIT_DELAYED_WORK(&dev->watchdog, vrnic_watchdog);
	queue_delayed_work(system_unbound_wq, &dev->watchdog,
			   msecs_to_jiffies(VRNIC_WATCHDOG_MS));
	return 0;

err_teardown:
	vrnic_hw_teardown(dev);
	goto err_free_vectors;
err_free_irq:
	free_irq(pci_irq_vector(pdev, 0), dev);
err_free_vectors:
	pci_free_irq_vectors(pdev);
err_clear_master:
	pci_clear_master(pdev);
err_unmap:
	vrnic_unmap_bars(dev);
	return err;
}

static void vrnic_remove_dev(struct vrnic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;

	cancel_delayed_work_sync(&dev->watchdog);
	vrnic_ceqs_destroy(dev);
	vrnic_hw_teardown(dev);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	vrnic_unmap_bars(dev);
}

static const struct ib_device_ops vrnic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VRNIC_UVERBS_ABI_VERSION,

	.add_gid = vrnic_add_gid,
	.alloc_dm = vrnic_alloc_dm,
	.alloc_hw_port_stats = vrnic_alloc_hw_port_stats,
	.alloc_pd = vrnic_alloc_pd,
	.attach_mcast = vrnic_attach_mcast,
	.counter_alloc_stats = vrnic_counter_alloc_stats,
	.counter_dealloc = vrnic_counter_dealloc,
	.counter_update_stats = vrnic_counter_update_stats,
	.alloc_ucontext = vrnic_alloc_ucontext,
	.create_ah = vrnic_create_ah,
	.create_user_ah = vrnic_create_ah,
	.create_qp = vrnic_create_qp,
	.create_srq = vrnic_create_srq,
	.dealloc_dm = vrnic_dealloc_dm,
	.dealloc_pd = vrnic_dealloc_pd,
	.dealloc_ucontext = vrnic_dealloc_ucontext,
	.del_gid = vrnic_del_gid,
	.dereg_mr = vrnic_dereg_mr,
	.rereg_user_mr = vrnic_rereg_user_mr,
	.destroy_ah = vrnic_destroy_ah,
	.destroy_cq = vrnic_destroy_cq,
	.destroy_qp = vrnic_destroy_qp,
	.destroy_srq = vrnic_destroy_srq,
	.detach_mcast = vrnic_detach_mcast,
	.device_group = &vrnic_attr_group,
	.disassociate_ucontext = vrnic_disassociate_ucontext,
	.fill_res_qp_entry = vrnic_fill_res_qp_entry,
	.get_dev_fw_str = vrnic_get_dev_fw_str,
	.get_dma_mr = vrnic_get_dma_mr,
	.alloc_mr = vrnic_alloc_mr,
	.alloc_mw = vrnic_alloc_mw,
	.dealloc_mw = vrnic_dealloc_mw,
	.map_mr_sg = vrnic_map_mr_sg,
	.get_hw_stats = vrnic_get_hw_stats,
	.get_link_layer = vrnic_get_link_layer,
	.get_port_immutable = vrnic_get_port_immutable,
	.mmap = vrnic_mmap,
	.mmap_free = vrnic_mmap_free,
	.modify_cq = vrnic_modify_cq,
	.modify_qp = vrnic_modify_qp,
	.modify_srq = vrnic_modify_srq,
	.poll_cq = vrnic_poll_cq,
	.post_recv = vrnic_post_recv,
	.post_send = vrnic_post_send,
	.post_srq_recv = vrnic_post_srq_recv,
	.query_device = vrnic_query_device,
	.query_pkey = vrnic_query_pkey,
	.query_port = vrnic_query_port,
	.query_qp = vrnic_query_qp,
	.query_srq = vrnic_query_srq,
	.query_ucontext = vrnic_query_ucontext,
	.reg_dm_mr = vrnic_reg_dm_mr,
	.req_notify_cq = vrnic_req_notify_cq,
	/* create_cq, resize_cq, reg_user_mr, the counters, port events */
	VRNIC_COMPAT_DEV_OPS,

	INIT_RDMA_OBJ_SIZE(ib_ah, vrnic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vrnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, vrnic_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, vrnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vrnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vrnic_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vrnic_ucontext, ibucontext),
};

static int vrnic_ib_register(struct vrnic_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int err;

	/* The PCI function is the parent: libibverbs matches on it. */
	ibdev->dev.parent = &dev->pdev->dev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	strscpy(ibdev->node_desc, "vrnic virtual RNIC", sizeof(ibdev->node_desc));
	ibdev->node_guid = cpu_to_be64(dev->attrs.node_guid);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = dev->num_ceqs;
	ib_set_device_ops(ibdev, &vrnic_dev_ops);
	ibdev->driver_def = vrnic_uapi_defs;

	err = vrnic_dm_init(dev);
	if (err)
		return err;
	err = vrnic_port_init(dev);
	if (err)
		goto err_dm;
	err = ib_register_device(ibdev, "vrnic%d", &dev->pdev->dev);
	if (err) {
		dev_err(&dev->pdev->dev, "ib_register_device failed: %d\n", err);
		vrnic_port_uninit(dev);
		goto err_dm;
	}
	set_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags);
	/* GIDs of a netdev that arrived during registration. */
	queue_work(system_unbound_wq, &dev->port_work);
	return 0;

err_dm:
	vrnic_dm_fini(dev);
	return err;
}

static void vrnic_ib_unregister(struct vrnic_dev *dev)
{
	clear_bit(VRNIC_FLAG_IB_REGISTERED, &dev->flags);
	/* No vector 0 handler may still be dispatching an event. */
	synchronize_irq(pci_irq_vector(dev->pdev, 0));
	vrnic_port_uninit(dev);
	ib_unregister_device(&dev->ibdev);
	vrnic_dm_fini(dev);
}

/* The software state of a new device, before any of it is touched. */
static void vrnic_init_dev(struct vrnic_dev *dev, struct pci_dev *pdev)
{
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);
	spin_lock_init(&dev->recover_lock);
	INIT_DELAYED_WORK(&dev->recover_work, vrnic_recover);
	spin_lock_init(&dev->lent_lock);
	INIT_LIST_HEAD(&dev->lent);
	xa_init_flags(&dev->cq_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->qp_xa, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->srq_xa, XA_FLAGS_LOCK_IRQ);
	mutex_init(&dev->obj_xa_lock);
}

static void vrnic_fini_dev(struct vrnic_dev *dev)
{
	xa_destroy(&dev->srq_xa);
	xa_destroy(&dev->qp_xa);
	xa_destroy(&dev->cq_xa);
	mutex_destroy(&dev->obj_xa_lock);
}

static int vrnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vrnic_dev *dev;
	int err;

	/* A reprobe of a device the admin unbound meanwhile: leave it so. */
	if (vrnic_cancel_reprobes(pdev))
		return -ENODEV;
	err = pci_enable_device_mem(pdev);
	if (err)
		return err;
	err = vrnic_check_signature(pdev);
	if (err)
		goto err_disable;

	dev = ib_alloc_device(vrnic_dev, ibdev);
	if (!dev) {
		err = -ENOMEM;
		goto err_disable;
	}
	vrnic_init_dev(dev, pdev);
	err = vrnic_probe_dev(dev);
	if (err)
		goto err_dealloc;
	err = vrnic_ib_register(dev);
	if (err)
		goto err_remove_dev;

	dev_info(&pdev->dev,
		 "%s: vrnic %u.%u, MAC %pM, %u completion vectors%s\n",
		 dev_name(&dev->ibdev.dev),
		 (u32)FIELD_GET(VRNIC_VERSION_MAJOR_MASK,
				vrnic_reg_read(dev, VRNIC_REG_VERSION)),
		 (u32)FIELD_GET(VRNIC_VERSION_MINOR_MASK,
				vrnic_reg_read(dev, VRNIC_REG_VERSION)),
		 dev->attrs.mac, dev->num_ceqs,
		 dev->user_db ? "" : ", no user doorbells");
	return 0;

err_remove_dev:
	vrnic_remove_dev(dev);
err_dealloc:
	vrnic_fini_dev(dev);
	ib_dealloc_device(&dev->ibdev);
err_disable:
	pci_disable_device(pdev);
	return err;
}

static void vrnic_remove(struct pci_dev *pdev)
{
	struct vrnic_dev *dev = pci_get_drvdata(pdev);

	/* Going away: no reset and reprobe behind our back. */
	vrnic_cancel_reprobes(pdev);
	vrnic_stop_recovery(dev);
	vrnic_ib_unregister(dev);
	vrnic_remove_dev(dev);
	vrnic_fini_dev(dev);
	ib_dealloc_device(&dev->ibdev);
	pci_disable_device(pdev);
}

static struct pci_driver vrnic_pci_driver = {
	.name = VRNIC_DRV_NAME,
	.id_table = vrnic_pci_tbl,
	.probe = vrnic_probe,
	.remove = vrnic_remove,
};

static int __init vrnic_init(void)
{
	int err;

	vrnic_wq = alloc_ordered_workqueue("vrnic", 0);
	if (!vrnic_wq)
		return -ENOMEM;
	err = pci_register_driver(&vrnic_pci_driver);
	if (err)
		destroy_workqueue(vrnic_wq);
	return err;
}

static void __exit vrnic_exit(void)
{
	struct vrnic_reprobe *r, *tmp;
	LIST_HEAD(waiting);

	/*
	 * A reprobe under way finishes first (it frees itself); no new one
	 * starts, and those still waiting never run.
	 */
	spin_lock(&vrnic_wq_lock);
	vrnic_unloading = true;
	list_for_each_entry_safe(r, tmp, &vrnic_reprobes, node)
		if (cancel_delayed_work(&r->work))
			list_move(&r->node, &waiting);
	spin_unlock(&vrnic_wq_lock);
	list_for_each_entry_safe(r, tmp, &waiting, node) {
		list_del(&r->node);
		pci_dev_put(r->pdev);
		kfree(r);
	}
	flush_workqueue(vrnic_wq);
	pci_unregister_driver(&vrnic_pci_driver);
	destroy_workqueue(vrnic_wq);
}

module_init(vrnic_init);
module_exit(vrnic_exit);
