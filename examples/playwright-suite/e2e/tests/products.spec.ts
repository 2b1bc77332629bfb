import { test, expect } from '../fixtures/shop';
import { products } from '../fixtures/data';

test.describe('products', () => {
  for (const product of products) {
    test(`lists ${product.name}`, async ({ shop }) => {
      await expect(shop.product(product.name)).toBeVisible();
    });
  }
});
