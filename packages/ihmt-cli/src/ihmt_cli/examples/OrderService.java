package com.example.shop.orders;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;

/**
 * Places, pays and cancels customer orders for the shop.
 */
public class OrderService {

    private final OrderRepository repository;
    private final PaymentGateway payments;
    private final Clock clock;

    public OrderService(OrderRepository repository, PaymentGateway payments, Clock clock) {
        this.repository = repository;
        this.payments = payments;
        this.clock = clock;
    }

    /** Creates a pending order and reserves the stock of every line. */
    public Order place(Customer customer, Cart cart) {
        Order order = Order.pending(customer.id(), cart.lines(), Instant.now(clock));
        repository.save(order);
        return order;
    }

    /**
     * Cancels an order: an unpaid order is simply closed, a paid one is refunded
     * through the payment gateway first. Shipped orders cannot be cancelled.
     */
    public Order cancel(String orderId, String reason) {
        Order order = repository.find(orderId)
            .orElseThrow(() -> new OrderNotFoundException(orderId));
        if (order.isShipped()) {
            throw new IllegalStateException("shipped orders cannot be cancelled: " + orderId);
        }
        if (order.isPaid()) {
            payments.refund(order.paymentId(), order.total());
        }
        Order cancelled = order.cancelled(reason, Instant.now(clock));
        repository.save(cancelled);
        return cancelled;
    }

    /** Looks an order up by id without loading its lines. */
    public Optional<Order> find(String orderId) {
        return repository.find(orderId);
    }
}
