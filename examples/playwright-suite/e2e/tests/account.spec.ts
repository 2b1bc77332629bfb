import { test, expect } from '../fixtures/shop';

test('the signed-in customer sees their name', async ({ page, customerName }) => {
  await page.goto('/account');
  await expect(page.locator('#customer')).toHaveText(customerName);
});
